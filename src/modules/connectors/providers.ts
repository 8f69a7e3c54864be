import { validation } from "../../lib/errors";
import { CONTROL_CHARS } from "../../lib/validate";

/**
 * The providers (DECISIONS.md "Connector providers"), what each one's
 * `config` holds, which credential fields it takes, and its natural key.
 *
 * - OAuth/app (`google_sheets`, `linear`, `slack`): created with enabled
 *   false, an empty config and no credentials; the OAuth flow attaches
 *   credentials and enables it; config (where to post) is set by PATCH.
 * - Triggers (`claude_trigger`, `cursor_trigger`, `github_trigger`,
 *   `jules_trigger`): config plus credential fields, enabled at once;
 *   idempotent by natural key.
 * - `webhook`: config.url; every delivery is HMAC-SHA256 signed with a
 *   per-connector secret returned once at create.
 */
export const OAUTH_PROVIDERS = ["google_sheets", "linear", "slack"] as const;
export const TRIGGER_PROVIDERS = ["claude_trigger", "cursor_trigger", "github_trigger", "jules_trigger"] as const;
export const PROVIDERS = [...OAUTH_PROVIDERS, ...TRIGGER_PROVIDERS, "webhook"] as const;
export type Provider = (typeof PROVIDERS)[number];
export type ProviderKind = "oauth" | "trigger" | "webhook";

/** Every credential field any provider takes, by its wire name. */
export const CREDENTIAL_FIELDS = ["fireToken", "apiKey", "appId", "privateKey", "installationId", "accessToken"] as const;
export type CredentialField = (typeof CREDENTIAL_FIELDS)[number];
export type Credentials = Record<string, string | number | undefined>;

type ConfigField = {
  name: string;
  required: boolean;
  max: number;
  /** `url`: an http(s) URL; `text`: a one-line string. */
  kind: "url" | "text" | "text-list";
  help: string;
};

export type ProviderSpec = {
  provider: Provider;
  kind: ProviderKind;
  label: string;
  /** What `config` may hold (anything else is refused by name). */
  config: ConfigField[];
  /** Credential fields this provider takes at create (and in PATCH). */
  credentials: { name: CredentialField; required: boolean; help: string }[];
  /** Checks the credentials as a set (github: app or user token); null when fine. */
  credentialRule?: (c: Credentials) => string | null;
  /** The natural key of a trigger, from its checked config. */
  naturalKey?: (config: Record<string, unknown>) => string;
};

const text = (name: string, required: boolean, help: string, max = 200): ConfigField => ({ name, required, max, kind: "text", help });

export const PROVIDER_SPECS: Record<Provider, ProviderSpec> = {
  google_sheets: {
    provider: "google_sheets",
    kind: "oauth",
    label: "Google Sheets (append a row per event)",
    config: [text("spreadsheetId", false, "The spreadsheet's id (from its URL)"), text("range", false, "Sheet (tab) name or A1 range rows are appended to; default Sheet1")],
    credentials: [],
  },
  linear: {
    provider: "linear",
    kind: "oauth",
    label: "Linear (create an issue per event)",
    config: [text("teamId", false, "The team issues are created in"), { name: "labelIds", required: false, max: 20, kind: "text-list", help: "Label ids put on each issue" }],
    credentials: [],
  },
  slack: {
    provider: "slack",
    kind: "oauth",
    label: "Slack (post a message per event)",
    config: [text("channel", false, "Channel id or name to post to, e.g. C0123456789 or #alerts")],
    credentials: [],
  },
  claude_trigger: {
    provider: "claude_trigger",
    kind: "trigger",
    label: "Claude Code routine (fire a run per event)",
    config: [text("routineId", true, "The routine's id (trig_…), from its API trigger URL")],
    credentials: [{ name: "fireToken", required: false, help: "The routine's API trigger token (sent as Bearer)" }],
    naturalKey: (c) => String(c.routineId),
  },
  cursor_trigger: {
    provider: "cursor_trigger",
    kind: "trigger",
    label: "Cursor background agent (launch an agent per event)",
    config: [
      { name: "repoUrl", required: true, max: 500, kind: "url", help: "The repository, e.g. https://github.com/acme/web" },
      text("ref", false, "Branch, tag or commit the agent starts from (default: the repository's default branch)"),
      text("model", false, "The model the agent uses (default: Cursor's)"),
    ],
    credentials: [{ name: "apiKey", required: true, help: "A Cursor API key (sent as Bearer)" }],
    naturalKey: (c) => normaliseRepoUrl(String(c.repoUrl)),
  },
  github_trigger: {
    provider: "github_trigger",
    kind: "trigger",
    label: "GitHub repository_dispatch (start workflows per event)",
    config: [
      text("owner", true, "Repository owner (user or organisation)", 100),
      text("repo", true, "Repository name", 100),
      text("eventType", false, "The dispatch's event_type (default: the event's type, e.g. bug.created)", 100),
    ],
    credentials: [
      { name: "appId", required: false, help: "GitHub App id (with privateKey)" },
      { name: "privateKey", required: false, help: "GitHub App private key, PEM (with appId)" },
      { name: "installationId", required: false, help: "The App's installation id (optional: looked up from the repository)" },
      { name: "accessToken", required: false, help: "Instead of an App: a user access token (fine-grained or classic) with contents:write" },
    ],
    credentialRule: (c) => {
      const app = c.appId !== undefined || c.privateKey !== undefined;
      if (app && c.accessToken !== undefined) return "accessToken: give either appId with privateKey (a GitHub App) or accessToken, not both";
      if (app && (c.appId === undefined || c.privateKey === undefined)) return `${c.appId === undefined ? "appId" : "privateKey"}: a GitHub App needs both appId and privateKey`;
      if (!app && c.installationId !== undefined) return "installationId: only with appId and privateKey";
      if (!app && c.accessToken === undefined) return "accessToken: give appId with privateKey (a GitHub App) or accessToken (a user token)";
      if (c.privateKey !== undefined && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(String(c.privateKey))) return "privateKey: expected a PEM private key (-----BEGIN RSA PRIVATE KEY-----…)";
      return null;
    },
    naturalKey: (c) => `${String(c.owner).toLowerCase()}/${String(c.repo).toLowerCase()}`,
  },
  jules_trigger: {
    provider: "jules_trigger",
    kind: "trigger",
    label: "Jules (start a session per event)",
    config: [
      text("source", true, "The Jules source, e.g. sources/github/acme/web"),
      text("startingBranch", false, "Branch the session starts from (default main)"),
    ],
    credentials: [{ name: "apiKey", required: true, help: "A Jules API key (sent as X-Goog-Api-Key)" }],
    naturalKey: (c) => String(c.source),
  },
  webhook: {
    provider: "webhook",
    kind: "webhook",
    label: "Webhook (POST signed JSON)",
    config: [{ name: "url", required: true, max: 2048, kind: "url", help: "Where each event is POSTed" }],
    credentials: [],
  },
};

export function isProvider(value: string): value is Provider {
  return (PROVIDERS as readonly string[]).includes(value);
}

/** https://GitHub.com/Acme/Web.git/ → https://github.com/Acme/Web (host lower-cased, no trailing slash or .git). */
export function normaliseRepoUrl(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, "").replace(/\.git$/, "");
  return `${parsed.protocol}//${parsed.host.toLowerCase()}${path}`;
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/**
 * A provider's config as sent: every field it declares checked, anything
 * else refused by name. `partial` (PATCH merges into the stored config):
 * required fields may be missing here and are checked on the merged result.
 */
export function checkConfig(spec: ProviderSpec, config: Record<string, unknown>, where = "config"): Record<string, unknown> {
  const known = new Map(spec.config.map((f) => [f.name, f]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const field = known.get(key);
    if (!field) {
      const fields = spec.config.map((f) => f.name).join(", ") || "none";
      throw validation(`${where}.${key} is not a setting of provider ${spec.provider}`, `${where}.${key}: not a setting of ${spec.provider} (settings: ${fields})`);
    }
    if (value === null && !field.required) continue;
    if (field.kind === "text-list") {
      if (!Array.isArray(value) || value.length > field.max || value.some((v) => typeof v !== "string" || v.length === 0 || v.length > 200 || CONTROL_CHARS.test(v))) {
        throw validation(`${where}.${key} must be a list of ids`, `${where}.${key}: expected up to ${field.max} non-empty strings`);
      }
      out[key] = [...value];
      continue;
    }
    if (typeof value !== "string") throw validation(`${where}.${key} must be a string`, `${where}.${key}: expected a string`);
    const trimmed = value.trim();
    if (trimmed.length === 0 || trimmed.length > field.max) {
      throw validation(`${where}.${key} must be 1 to ${field.max} characters`, `${where}.${key}: ${trimmed.length} characters; allowed 1 to ${field.max}`);
    }
    if (CONTROL_CHARS.test(trimmed)) throw validation(`${where}.${key} must not contain control characters`, `${where}.${key}: control characters are not allowed`);
    if (field.kind === "url" && !isHttpUrl(trimmed)) throw validation(`${where}.${key} must be an http(s) URL`, `${where}.${key}: expected an http:// or https:// URL`);
    out[key] = trimmed;
  }
  return out;
}

/** The required config fields of a provider that `config` lacks. */
export function missingConfig(spec: ProviderSpec, config: Record<string, unknown>): string[] {
  return spec.config.filter((f) => f.required && (config[f.name] === undefined || config[f.name] === null)).map((f) => f.name);
}

/** Credential fields as sent: those of another provider are refused by name; values are non-empty strings (appId/installationId may be numbers). */
export function checkCredentials(spec: ProviderSpec, sent: Partial<Record<CredentialField, unknown>>): Credentials {
  const allowed = new Set(spec.credentials.map((c) => c.name));
  const out: Credentials = {};
  for (const name of CREDENTIAL_FIELDS) {
    const value = sent[name];
    if (value === undefined) continue;
    if (!allowed.has(name)) {
      const fields = spec.credentials.map((c) => c.name).join(", ");
      throw validation(
        `${name} is not a credential of provider ${spec.provider}`,
        `${name}: ${spec.kind === "oauth" ? `${spec.provider} gets its credentials from its OAuth flow` : spec.kind === "webhook" ? "a webhook's signing secret is made by the service" : `credentials of ${spec.provider}: ${fields}`}`,
      );
    }
    if (typeof value === "number" && (name === "appId" || name === "installationId") && Number.isInteger(value) && value > 0) {
      out[name] = String(value);
      continue;
    }
    if (typeof value !== "string" || value.trim().length === 0 || value.length > 10_000) {
      throw validation(`${name} must be a non-empty string`, `${name}: expected a non-empty string of at most 10000 characters`);
    }
    if (name !== "privateKey" && CONTROL_CHARS.test(value)) throw validation(`${name} must not contain control characters`, `${name}: control characters are not allowed`);
    out[name] = name === "privateKey" ? value : value.trim();
  }
  return out;
}

/** The credentials a connector will hold, as a set: required fields present and the provider's rule met. */
export function checkCredentialSet(spec: ProviderSpec, creds: Credentials): void {
  for (const c of spec.credentials) {
    if (c.required && creds[c.name] === undefined) throw validation(`${c.name} is required for provider ${spec.provider}`, `${c.name}: ${c.help}`);
  }
  const broken = spec.credentialRule?.(creds);
  if (broken) throw validation(broken.slice(broken.indexOf(": ") + 2), broken);
}
