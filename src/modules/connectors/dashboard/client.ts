import { apiOf, call } from "../../../web/dashboard/api";
import type { connectorRoutes } from "../routes";

export const connectorApi = apiOf<ReturnType<typeof connectorRoutes>>();

export type Connector = NonNullable<Awaited<ReturnType<typeof connectorApi.api.admin.connectors.get>>["data"]>[number];
export type Delivery = NonNullable<Awaited<ReturnType<ReturnType<typeof connectorApi.api.admin.connectors>["deliveries"]["get"]>>["data"]>[number];

export const loadConnectors = () => call(connectorApi.api.admin.connectors.get({ query: {} }));

/** The event types a connector may hear (a file that imports nothing, as lib/envs.ts is for ENVS). */
export { OUTBOX_EVENT_TYPES as EVENT_TYPES } from "../../../lib/outbox-types";

export type ProviderName = "google_sheets" | "linear" | "slack" | "claude_trigger" | "cursor_trigger" | "github_trigger" | "jules_trigger" | "webhook";

type Setting = { name: string; label: string; hint: string; required?: boolean; list?: boolean };
type Secret = { name: "fireToken" | "apiKey" | "appId" | "privateKey" | "installationId" | "accessToken"; label: string; hint: string; required?: boolean; multiline?: boolean };

/** What each provider asks for (providers.ts, as a form). */
export const PROVIDER_FORMS: Record<ProviderName, { label: string; kind: "oauth" | "trigger" | "webhook"; settings: Setting[]; secrets: Secret[]; help: string }> = {
  webhook: {
    label: "Webhook",
    kind: "webhook",
    settings: [{ name: "url", label: "URL", hint: "Where each event is POSTed as signed JSON", required: true }],
    secrets: [],
    help: "Every delivery is signed (X-Svc-Signature, HMAC-SHA256). The signing secret is shown once, after creating.",
  },
  slack: { label: "Slack", kind: "oauth", settings: [{ name: "channel", label: "Channel", hint: "Channel id or name, e.g. #alerts" }], secrets: [], help: "Created disabled; connect it to Slack (OAuth), then set the channel." },
  linear: {
    label: "Linear",
    kind: "oauth",
    settings: [
      { name: "teamId", label: "Team id", hint: "The team issues are created in" },
      { name: "labelIds", label: "Label ids", hint: "Comma-separated, optional", list: true },
    ],
    secrets: [],
    help: "Created disabled; connect it to Linear (OAuth), then set the team.",
  },
  google_sheets: {
    label: "Google Sheets",
    kind: "oauth",
    settings: [
      { name: "spreadsheetId", label: "Spreadsheet id", hint: "From the spreadsheet's URL" },
      { name: "range", label: "Sheet", hint: "Tab rows are appended to (default Sheet1)" },
    ],
    secrets: [],
    help: "Created disabled; connect it to Google (OAuth), then set the spreadsheet.",
  },
  claude_trigger: {
    label: "Claude Code routine",
    kind: "trigger",
    settings: [{ name: "routineId", label: "Routine id", hint: "From the routine's API trigger URL (trig_…)", required: true }],
    secrets: [{ name: "fireToken", label: "Fire token", hint: "The routine's API trigger token (optional)" }],
    help: "Fires the routine once per event, with the event as its text.",
  },
  cursor_trigger: {
    label: "Cursor agent",
    kind: "trigger",
    settings: [
      { name: "repoUrl", label: "Repository URL", hint: "e.g. https://github.com/acme/web", required: true },
      { name: "ref", label: "Branch or ref", hint: "Optional" },
    ],
    secrets: [{ name: "apiKey", label: "Cursor API key", hint: "From the Cursor dashboard", required: true }],
    help: "Launches a background agent on the repository per event.",
  },
  github_trigger: {
    label: "GitHub repository_dispatch",
    kind: "trigger",
    settings: [
      { name: "owner", label: "Owner", hint: "User or organisation", required: true },
      { name: "repo", label: "Repository", hint: "Its name", required: true },
      { name: "eventType", label: "Dispatch event type", hint: "Default: the event's type, e.g. bug.created" },
    ],
    secrets: [
      { name: "accessToken", label: "User access token", hint: "Either this, or a GitHub App below" },
      { name: "appId", label: "GitHub App id", hint: "With the App's private key" },
      { name: "privateKey", label: "GitHub App private key (PEM)", hint: "-----BEGIN RSA PRIVATE KEY-----…", multiline: true },
    ],
    help: "Sends a repository_dispatch per event, to start GitHub Actions workflows.",
  },
  jules_trigger: {
    label: "Jules session",
    kind: "trigger",
    settings: [
      { name: "source", label: "Source", hint: "e.g. sources/github/acme/web", required: true },
      { name: "startingBranch", label: "Starting branch", hint: "Default main" },
    ],
    secrets: [{ name: "apiKey", label: "Jules API key", hint: "From Jules settings", required: true }],
    help: "Starts a Jules session on the source per event.",
  },
};

export const PROVIDER_NAMES = Object.keys(PROVIDER_FORMS) as ProviderName[];

export const providerLabel = (p: string) => PROVIDER_FORMS[p as ProviderName]?.label ?? p;

/** What the connector points at, in one line. */
export function targetOf(c: Connector): string {
  const cfg = c.config as Record<string, unknown>;
  const v = cfg.url ?? cfg.channel ?? cfg.teamId ?? cfg.spreadsheetId ?? cfg.routineId ?? cfg.repoUrl ?? (cfg.owner ? `${cfg.owner}/${cfg.repo}` : undefined) ?? cfg.source;
  return v === undefined ? "" : String(v);
}
