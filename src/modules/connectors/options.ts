/**
 * The connectors module's settings: where vendors are (every base URL can be
 * moved, so tests and proxies use stand-ins), OAuth client ids, the secret
 * key, and the delivery policy. `svc serve` reads them from the environment
 * (`connectorOptionsFromEnv`); an embedding (tests) passes
 * `AppOptions.connectors`, which wins field by field.
 */

/** The vendor endpoints a connector may call; each one is a setting. */
export type VendorUrls = {
  /** Slack Web API (chat.postMessage, oauth.v2.access). SERVICE_SLACK_API_URL. */
  slackApi: string;
  /** Slack's authorize page. SERVICE_SLACK_AUTHORIZE_URL. */
  slackAuthorize: string;
  /** Linear's API origin (/graphql, /oauth/token). SERVICE_LINEAR_API_URL. */
  linearApi: string;
  /** Linear's authorize page. SERVICE_LINEAR_AUTHORIZE_URL. */
  linearAuthorize: string;
  /** Google Sheets API origin (/v4/spreadsheets/…). SERVICE_GOOGLE_SHEETS_API_URL. */
  sheetsApi: string;
  /** Google's authorize page. SERVICE_GOOGLE_AUTHORIZE_URL. */
  googleAuthorize: string;
  /** Google's token endpoint. SERVICE_GOOGLE_TOKEN_URL. */
  googleToken: string;
  /** GitHub REST API origin. SERVICE_GITHUB_API_URL. */
  githubApi: string;
  /** Anthropic API origin (Claude Code routine fire). SERVICE_CLAUDE_API_URL. */
  claudeApi: string;
  /** Cursor API origin (background agents). SERVICE_CURSOR_API_URL. */
  cursorApi: string;
  /** Jules API origin (sessions). SERVICE_JULES_API_URL. */
  julesApi: string;
};

export const DEFAULT_VENDOR_URLS: VendorUrls = {
  slackApi: "https://slack.com/api",
  slackAuthorize: "https://slack.com/oauth/v2/authorize",
  linearApi: "https://api.linear.app",
  linearAuthorize: "https://linear.app/oauth/authorize",
  sheetsApi: "https://sheets.googleapis.com",
  googleAuthorize: "https://accounts.google.com/o/oauth2/v2/auth",
  googleToken: "https://oauth2.googleapis.com/token",
  githubApi: "https://api.github.com",
  claudeApi: "https://api.anthropic.com",
  cursorApi: "https://api.cursor.com",
  julesApi: "https://jules.googleapis.com",
};

const URL_ENV: Record<keyof VendorUrls, string> = {
  slackApi: "SERVICE_SLACK_API_URL",
  slackAuthorize: "SERVICE_SLACK_AUTHORIZE_URL",
  linearApi: "SERVICE_LINEAR_API_URL",
  linearAuthorize: "SERVICE_LINEAR_AUTHORIZE_URL",
  sheetsApi: "SERVICE_GOOGLE_SHEETS_API_URL",
  googleAuthorize: "SERVICE_GOOGLE_AUTHORIZE_URL",
  googleToken: "SERVICE_GOOGLE_TOKEN_URL",
  githubApi: "SERVICE_GITHUB_API_URL",
  claudeApi: "SERVICE_CLAUDE_API_URL",
  cursorApi: "SERVICE_CURSOR_API_URL",
  julesApi: "SERVICE_JULES_API_URL",
};

/** The OAuth app of one provider: SERVICE_<VENDOR>_CLIENT_ID and SERVICE_<VENDOR>_CLIENT_SECRET. */
export type OAuthClient = { clientId: string; clientSecret: string };
export type OAuthProvider = "slack" | "linear" | "google_sheets";

/** The <VENDOR> of SERVICE_<VENDOR>_CLIENT_ID and SERVICE_<VENDOR>_CLIENT_SECRET. */
export const OAUTH_ENV: Record<OAuthProvider, string> = { slack: "SLACK", linear: "LINEAR", google_sheets: "GOOGLE" };

export type ConnectorOptions = {
  /** Where `secret.key` is created when SERVICE_SECRET_KEY is not set (default: the server's data dir). */
  dataDir?: string;
  /** SERVICE_SECRET_KEY: 32 bytes as 64 hex digits or base64. */
  secretKey?: string;
  urls?: Partial<VendorUrls>;
  oauth?: Partial<Record<OAuthProvider, OAuthClient>>;
  /** Run the drainer on this server (default true; false on `--edge-only`). */
  drain?: boolean;
  /** How often the drainer looks for work besides being woken (default 1000 ms). SERVICE_CONNECTOR_POLL_MS. */
  pollMs?: number;
  /** First retry delay, doubled per failed attempt (default 1000 ms). SERVICE_CONNECTOR_RETRY_BASE_MS. */
  retryBaseMs?: number;
  /** Longest retry delay (default 1 h). SERVICE_CONNECTOR_RETRY_MAX_MS. */
  retryMaxMs?: number;
  /** Attempts before a delivery is `failed` (default 20). SERVICE_CONNECTOR_MAX_ATTEMPTS. */
  maxAttempts?: number;
  /** How long a claimed delivery is this server's before another may take it (default 60 s). SERVICE_CONNECTOR_LEASE_MS. */
  leaseMs?: number;
  /** Timeout of one vendor call (default 10 s). SERVICE_CONNECTOR_TIMEOUT_MS. */
  sendTimeoutMs?: number;
  /** Vendor calls in flight per server (default 64). SERVICE_CONNECTOR_CONCURRENCY. */
  concurrency?: number;
  /**
   * Whether a webhook may target a loopback, private or link-local address
   * (default false: refused at save and at delivery). SERVICE_CONNECTOR_PRIVATE_TARGETS=allow
   * (tests with local stand-ins, installs whose receivers live on the private network).
   */
  allowPrivateTargets?: boolean;
};

export type ResolvedConnectorOptions = Required<Omit<ConnectorOptions, "dataDir" | "secretKey" | "urls" | "oauth">> & {
  dataDir?: string;
  secretKey?: string;
  urls: VendorUrls;
  oauth: Partial<Record<OAuthProvider, OAuthClient>>;
};

function positive(env: Record<string, string | undefined>, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === "") return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: must be a whole number of at least 1 (was "${text}")`);
  return n;
}

function url(env: Record<string, string | undefined>, name: string): string | undefined {
  const text = env[name];
  if (!text) return undefined;
  try {
    const parsed = new URL(text);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
  } catch {
    throw new Error(`${name}: must be an http(s) URL (was "${text}")`);
  }
  return text.replace(/\/+$/, "");
}

function privateTargets(text: string | undefined): boolean | undefined {
  if (text === undefined || text === "") return undefined;
  if (text === "allow") return true;
  if (text === "refuse") return false;
  throw new Error(`SERVICE_CONNECTOR_PRIVATE_TARGETS: allow or refuse (was "${text}")`);
}

/** The settings from SERVICE_* environment variables (see docs/api.md "Connectors"). */
export function connectorOptionsFromEnv(env: Record<string, string | undefined>): ConnectorOptions {
  const urls: Partial<VendorUrls> = {};
  for (const [field, name] of Object.entries(URL_ENV) as [keyof VendorUrls, string][]) {
    const value = url(env, name);
    if (value) urls[field] = value;
  }
  const oauth: Partial<Record<OAuthProvider, OAuthClient>> = {};
  for (const [provider, vendor] of Object.entries(OAUTH_ENV) as [OAuthProvider, string][]) {
    const clientId = env[`SERVICE_${vendor}_CLIENT_ID`];
    const clientSecret = env[`SERVICE_${vendor}_CLIENT_SECRET`];
    if (clientId && clientSecret) oauth[provider] = { clientId, clientSecret };
  }
  return {
    secretKey: env.SERVICE_SECRET_KEY || undefined,
    urls,
    oauth,
    pollMs: positive(env, "SERVICE_CONNECTOR_POLL_MS"),
    retryBaseMs: positive(env, "SERVICE_CONNECTOR_RETRY_BASE_MS"),
    retryMaxMs: positive(env, "SERVICE_CONNECTOR_RETRY_MAX_MS"),
    maxAttempts: positive(env, "SERVICE_CONNECTOR_MAX_ATTEMPTS"),
    leaseMs: positive(env, "SERVICE_CONNECTOR_LEASE_MS"),
    sendTimeoutMs: positive(env, "SERVICE_CONNECTOR_TIMEOUT_MS"),
    concurrency: positive(env, "SERVICE_CONNECTOR_CONCURRENCY"),
    allowPrivateTargets: privateTargets(env.SERVICE_CONNECTOR_PRIVATE_TARGETS),
  };
}

const defined = <T extends object>(o: T | undefined): Partial<T> =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;

/** Environment first, then what the embedding passed on top, then the defaults. */
export function resolveConnectorOptions(fromEnv: ConnectorOptions, given: ConnectorOptions | undefined, fallbackDataDir: string | undefined): ResolvedConnectorOptions {
  const merged: ConnectorOptions = { ...defined(fromEnv), ...defined(given) };
  return {
    dataDir: merged.dataDir ?? fallbackDataDir,
    secretKey: merged.secretKey,
    urls: { ...DEFAULT_VENDOR_URLS, ...defined(fromEnv.urls), ...defined(given?.urls) },
    oauth: { ...fromEnv.oauth, ...given?.oauth },
    drain: merged.drain ?? true,
    pollMs: merged.pollMs ?? 1000,
    retryBaseMs: merged.retryBaseMs ?? 1000,
    retryMaxMs: merged.retryMaxMs ?? 3_600_000,
    maxAttempts: merged.maxAttempts ?? 20,
    leaseMs: merged.leaseMs ?? 60_000,
    sendTimeoutMs: merged.sendTimeoutMs ?? 10_000,
    concurrency: merged.concurrency ?? 64,
    allowPrivateTargets: merged.allowPrivateTargets ?? false,
  };
}

/** Delay before attempt `failed + 1`: base × 2^(failed − 1), capped (1 s, 2 s, 4 s … 1 h by default). */
export function backoffMs(failedAttempts: number, baseMs: number, maxMs: number): number {
  const exp = Math.min(Math.max(failedAttempts - 1, 0), 40);
  return Math.min(baseMs * 2 ** exp, maxMs);
}
