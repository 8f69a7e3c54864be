import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { nodeCrypto } from "../lib/node-crypto";
import { NetworkError, NotSignedInError } from "./client-errors";

/**
 * The user's files: the credentials pair (0600, written whole), the
 * preferences, the `.service` binding of a directory, and the lock that one
 * refresh at a time holds. SvcClient (client.ts) reads and writes them.
 */

export const ENVS = ["dev", "staging", "prod"] as const;
export type Env = (typeof ENVS)[number];

/** `~/.service/credentials`: what `svc login` writes; exactly the spec's fields plus `server_url`. */
export type Credentials = {
  access_token: string;
  refresh_token: string;
  project_id: string | null;
  user_email: string;
  /** When this pair was issued (ISO 8601): the access token stops working ACCESS_TOKEN_LIFETIME_MS later. */
  created_at: string;
  /** The server that issued the pair, normalised (normaliseUrl): the only one it is ever sent to. */
  server_url: string;
};

/** `~/.service/config.json`: preferences used when no flag says otherwise. */
export type Preferences = { project_id?: string; env?: Env };

/** Refresh this long before the access token expires, so a call does not race the clock. */
export const EXPIRY_SKEW_MS = 30_000;
/** Access tokens live 1 hour (SPEC "Limits"); a server that disagrees answers 401, which also refreshes. */
export const ACCESS_TOKEN_LIFETIME_MS = 3600_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** A lock older than this was left by a process that died mid-refresh (a live one gives up on the server sooner). */
export const STALE_LOCK_MS = REQUEST_TIMEOUT_MS + 15_000;

export type Environment = Record<string, string | undefined>;

/** `$SERVICE_CONFIG_DIR`, else `~/.service`. */
export function configDir(env: Environment = process.env): string {
  if (env.SERVICE_CONFIG_DIR) return resolve(env.SERVICE_CONFIG_DIR);
  return join(env.HOME || homedir(), ".service");
}

export function credentialsPath(env: Environment = process.env): string {
  return join(configDir(env), "credentials");
}

function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${path} is not valid JSON; fix or delete it`);
  }
}

export const isNonEmptyString = (v: unknown): v is string => typeof v === "string" && v !== "";

export function readCredentials(env: Environment = process.env): Credentials | null {
  const path = credentialsPath(env);
  let data: Partial<Credentials> | undefined;
  try {
    data = readJsonFile(path) as Partial<Credentials> | undefined;
  } catch (err) {
    throw new NotSignedInError(`${(err as Error).message}; run \`svc login\` again`);
  }
  if (data === undefined) return null;
  if (typeof data !== "object" || data === null || !isNonEmptyString(data.access_token) || !isNonEmptyString(data.refresh_token)) {
    throw new NotSignedInError(`${path} has no access_token/refresh_token; run \`svc login\` again`);
  }
  // Without the issuing server there is no server the pair may be sent to (no guessing a default).
  let issuer: string;
  try {
    if (!isNonEmptyString(data.server_url)) throw new Error("no server_url");
    issuer = normaliseUrl(data.server_url);
  } catch {
    throw new NotSignedInError(`${path} does not name the server that issued it (server_url); run \`svc login --url <server>\` again`);
  }
  return {
    access_token: data.access_token,
    refresh_token: data.refresh_token,
    project_id: isNonEmptyString(data.project_id) ? data.project_id : null,
    user_email: typeof data.user_email === "string" ? data.user_email : "",
    created_at: typeof data.created_at === "string" ? data.created_at : "",
    server_url: issuer,
  };
}

/**
 * Writes `path` so that no reader ever sees half a file and the result is
 * 0600: a private temp file beside it, chmod (an existing file's wider mode
 * or the umask must not leak into the new one), then rename over it.
 */
function writePrivateFile(path: string, text: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${nodeCrypto().randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
    chmodSync(temp, 0o600);
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

export function writeCredentials(credentials: Credentials, env: Environment = process.env): void {
  writePrivateFile(credentialsPath(env), `${JSON.stringify(credentials, null, 2)}\n`);
}

/** Removes the credentials file; true when there was one. */
export function deleteCredentials(env: Environment = process.env): boolean {
  const path = credentialsPath(env);
  if (!existsSync(path)) return false;
  rmSync(path, { force: true });
  return true;
}

export function readPreferences(env: Environment = process.env): Preferences {
  const path = join(configDir(env), "config.json");
  const data = readJsonFile(path) as Record<string, unknown> | undefined;
  if (data === undefined || typeof data !== "object" || data === null) return {};
  const prefs: Preferences = {};
  if (isNonEmptyString(data.project_id)) prefs.project_id = data.project_id;
  if (ENVS.includes(data.env as Env)) prefs.env = data.env as Env;
  return prefs;
}

/** The `.service` file that binds a directory tree to a project: nearest one from `cwd` upwards. */
export function findBinding(cwd: string): { path: string; projectId: string } | null {
  let dir = resolve(cwd);
  for (;;) {
    const path = join(dir, ".service");
    // `~/.service` is the config directory, not a binding file.
    if (existsSync(path) && statSync(path).isFile()) {
      const data = readJsonFile(path) as { project_id?: unknown } | undefined;
      if (!data || !isNonEmptyString(data.project_id)) throw new Error(`${path} has no "project_id"; run \`svc bind <project_id>\` again`);
      return { path, projectId: data.project_id };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export function writeBinding(dir: string, projectId: string): string {
  const path = join(resolve(dir), ".service");
  writeFileSync(path, `${JSON.stringify({ project_id: projectId }, null, 2)}\n`);
  return path;
}

export function normaliseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${url}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(`not an http(s) URL: ${url}`);
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Holds `<credentials>.lock` (created with `wx`, so only one process gets it)
 * while `fn` runs. A lock older than STALE_LOCK_MS is taken over.
 */
export async function withFileLock<T>(lockPath: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx", 0o600);
      writeFileSync(fd, `${process.pid} ${new Date().toISOString()}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let age = 0;
      try {
        age = Date.now() - statSync(lockPath).mtimeMs;
      } catch {
        continue; // released between our open and stat
      }
      if (age > STALE_LOCK_MS) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another svc process holds ${lockPath}; try again (or delete it if no svc is running)`);
      await sleep(25 + Math.random() * 50);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

/**
 * When the pair was issued, from the seconds its access token has left: a
 * pair handed out again (the refresh grace window) was issued earlier.
 */
function issuedAt(expiresIn: unknown): string {
  const left = typeof expiresIn === "number" && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : ACCESS_TOKEN_LIFETIME_MS;
  return new Date(Date.now() - Math.max(0, ACCESS_TOKEN_LIFETIME_MS - left)).toISOString();
}

/** The fields the token and refresh operations answer, ready to store. */
export function credentialsFromTokenResponse(body: any, base: { server_url: string; project_id: string | null; user_email: string }): Credentials {
  if (!isNonEmptyString(body?.access_token) || !isNonEmptyString(body?.refresh_token)) {
    throw new NetworkError("the server's token answer has no access_token/refresh_token");
  }
  return {
    access_token: body.access_token,
    refresh_token: body.refresh_token,
    project_id: isNonEmptyString(body.project_id) ? body.project_id : base.project_id,
    user_email: isNonEmptyString(body.user_email) ? body.user_email : base.user_email,
    created_at: issuedAt(body.expires_in),
    server_url: base.server_url,
  };
}
