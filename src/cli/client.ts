import { treaty } from "@elysiajs/eden";
import type { Elysia } from "elysia";
import { VERSION } from "../version";
import { ApiRequestError, NetworkError, NotSignedInError, type ProjectSource } from "./client-errors";
import {
  ACCESS_TOKEN_LIFETIME_MS,
  type Credentials,
  EXPIRY_SKEW_MS,
  type Env,
  type Environment,
  REQUEST_TIMEOUT_MS,
  STALE_LOCK_MS,
  credentialsFromTokenResponse,
  credentialsPath,
  findBinding,
  normaliseUrl,
  readCredentials,
  readPreferences,
  withFileLock,
  writeCredentials,
} from "./user-files";

// Everything a command imports from the client, wherever it lives.
export { ApiRequestError, NetworkError, NotSignedInError, type ProjectSource, type RequestContext } from "./client-errors";
export {
  type Credentials,
  ENVS,
  type Env,
  type Preferences,
  configDir,
  credentialsFromTokenResponse,
  credentialsPath,
  deleteCredentials,
  findBinding,
  normaliseUrl,
  readCredentials,
  readPreferences,
  writeBinding,
  writeCredentials,
} from "./user-files";

/**
 * What the CLI and the MCP tool server share: where the user's files are,
 * which credential, server and project a call uses (the spec's precedence),
 * access-token refresh under a lock, and authenticated HTTP.
 *
 * Stored credentials (the device-flow pair in the credentials file) are only
 * ever sent to the server that issued them, the file's `server_url`: a
 * `--url` or `SERVICE_URL` naming another server is refused before anything
 * is sent (NotSignedInError), and needs its own `svc login --url`.
 * SERVICE_CLI_TOKEN, given explicitly, goes where `--url`/`SERVICE_URL` say.
 */

export const DEFAULT_SERVER_URL = "http://localhost:8080";

export type SessionOptions = {
  /** `--url` */
  url?: string;
  /** `--project` */
  project?: string;
  cwd?: string;
  env?: Environment;
  /** How long a refresh waits for another process's lock before giving up (ms). */
  lockWaitMs?: number;
  /** Do not read the `.service` file (`svc bind` replaces it, even a broken one). */
  ignoreBinding?: boolean;
};


/**
 * Server URL order: `--url`, `SERVICE_URL`, the credentials file's `server_url`, localhost.
 * Only for calls that carry no stored credential (`svc login`, SERVICE_CLI_TOKEN);
 * the stored pair goes to `credentialsServerUrl` alone.
 */
export function resolveServerUrl(flag: string | undefined, env: Environment, credentials: Credentials | null): string {
  return normaliseUrl(flag || env.SERVICE_URL || credentials?.server_url || DEFAULT_SERVER_URL);
}

/** The server the caller asked for (`--url`, else `SERVICE_URL`), normalised; null when neither is set. */
export function requestedServer(flag: string | undefined, env: Environment): { url: string; from: "--url" | "SERVICE_URL" } | null {
  if (flag) return { url: normaliseUrl(flag), from: "--url" };
  if (env.SERVICE_URL) return { url: normaliseUrl(env.SERVICE_URL), from: "SERVICE_URL" };
  return null;
}

/**
 * Where the stored credentials may go: only the server that issued them.
 * A `--url` or `SERVICE_URL` naming another server is refused here, before
 * anything is sent, with the command that signs in there.
 */
export function credentialsServerUrl(flag: string | undefined, env: Environment, credentials: Credentials): string {
  const issuer = normaliseUrl(credentials.server_url);
  const requested = requestedServer(flag, env);
  if (requested && requested.url !== issuer) {
    throw new NotSignedInError(
      `the stored credentials (${credentialsPath(env)}) were issued by ${issuer}, but ${requested.from} names ${requested.url}; ` +
        `they are only ever sent to the server that issued them, so nothing was sent. ` +
        `Run \`svc login --url ${requested.url}\` to sign in there (it replaces the stored credentials)` +
        (requested.from === "SERVICE_URL" ? `, or unset SERVICE_URL to use ${issuer}.` : `, or leave out --url to use ${issuer}.`),
    );
  }
  return issuer;
}

type ErrorBody = { error?: unknown; code?: unknown; detail?: unknown };

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Redirects are not followed: a 307/308 would re-send a body (a refresh
 * token) to wherever the Location says, so a redirect is an error instead.
 */
async function refuseRedirect(serverUrl: string, res: Response): Promise<void> {
  if (res.status < 300 || res.status >= 400) return;
  await res.body?.cancel();
  const location = res.headers.get("location");
  throw new NetworkError(
    `${serverUrl} answered a redirect (HTTP ${res.status}${location ? ` to ${location}` : ""}); svc does not follow redirects, so nothing was sent there. If the server moved, run \`svc login --url <its new URL>\`.`,
  );
}

/** POST of a JSON body with no Authorization header (the /auth/device paths; refresh and revoke carry a token in the body). */
export async function postJson(serverUrl: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  let res: Response;
  try {
    res = await fetch(serverUrl + path, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": `svc-cli/${VERSION}` },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    throw new NetworkError(`could not reach ${serverUrl}: ${(err as Error).message}`);
  }
  await refuseRedirect(serverUrl, res);
  return { status: res.status, body: await readBody(res) };
}

function apiError(status: number, body: unknown): ApiRequestError {
  const b = (typeof body === "object" && body !== null ? body : {}) as ErrorBody;
  const message = typeof b.error === "string" ? b.error : typeof body === "string" && body ? body.slice(0, 200) : `HTTP ${status}`;
  return new ApiRequestError(status, typeof b.code === "string" ? b.code : `HTTP_${status}`, message, typeof b.detail === "string" ? b.detail : undefined);
}

export type RequestOptions = {
  body?: unknown;
  /** The operation takes X-Project-Id as required: resolve the credential's own project when none is selected. */
  requireProject?: boolean;
  /** Send no X-Project-Id whatever is selected (GET /me then lists every project, even when the selected one is unreachable). */
  withoutProject?: boolean;
};

/** The project calls are for, where that choice came from (and the `.service` file that made it); null leaves it to the credential. */
function selectProject(
  flag: string | undefined,
  cwd: string | null,
  credentials: Credentials | null,
  env: Environment,
): [string | null, ProjectSource, string | undefined] {
  if (flag) return [flag, "--project", undefined];
  const binding = cwd === null ? null : findBinding(cwd);
  if (binding) return [binding.projectId, ".service", binding.path];
  if (credentials?.project_id) return [credentials.project_id, "login", undefined];
  const preferred = readPreferences(env).project_id;
  return preferred ? [preferred, "config.json", undefined] : [null, "credential", undefined];
}

/**
 * One resolved session: the credential (SERVICE_CLI_TOKEN or the device-flow
 * pair in the credentials file), the server and the selected project.
 */
export class SvcClient {
  private constructor(
    private readonly env: Environment,
    readonly serverUrl: string,
    /** null: the credential's own project (the server's default). */
    public projectId: string | null,
    readonly projectSource: ProjectSource,
    readonly credentialSource: "SERVICE_CLI_TOKEN" | "credentials file",
    private token: string,
    private credentials: Credentials | null,
    private readonly lockWaitMs: number,
    /** The `.service` file that chose the project (projectSource ".service"). */
    readonly bindingPath?: string,
  ) {}

  /**
   * Precedence: SERVICE_CLI_TOKEN always wins over the credentials file (which
   * is then not read at all); project: `--project`, then the nearest `.service`
   * file, then the project bound at login, then config.json. Server: with
   * SERVICE_CLI_TOKEN, `--url`, then `SERVICE_URL`, then localhost; with the
   * credentials file, its `server_url` only (a different `--url`/`SERVICE_URL`
   * throws NotSignedInError).
   */
  static open(options: SessionOptions = {}): SvcClient {
    const env = options.env ?? process.env;
    const envToken = env.SERVICE_CLI_TOKEN?.trim();
    const credentials = envToken ? null : readCredentials(env);
    if (!envToken && !credentials) {
      throw new NotSignedInError(
        `not signed in: no credentials at ${credentialsPath(env)} (set by SERVICE_CONFIG_DIR, else HOME/.service). Run \`svc login\`, or set SERVICE_CLI_TOKEN.`,
      );
    }
    const serverUrl = credentials ? credentialsServerUrl(options.url, env, credentials) : resolveServerUrl(options.url, env, null);
    const cwd = options.ignoreBinding ? null : (options.cwd ?? process.cwd());
    const [projectId, source, bindingPath] = selectProject(options.project, cwd, credentials, env);
    return new SvcClient(
      env,
      serverUrl,
      projectId,
      source,
      envToken ? "SERVICE_CLI_TOKEN" : "credentials file",
      envToken || credentials!.access_token,
      credentials,
      options.lockWaitMs ?? STALE_LOCK_MS + 5_000,
      bindingPath,
    );
  }

  /** The email the stored sign-in belongs to ("" for SERVICE_CLI_TOKEN or when unknown). */
  get userEmail(): string {
    return this.credentials?.user_email ?? "";
  }

  /** The user's preferred env from config.json, if any. */
  preferredEnv(): Env | undefined {
    return readPreferences(this.env).env;
  }

  /** An unreadable created_at counts as fresh: the server's 401 then triggers the refresh. */
  private isExpired(): boolean {
    const issued = Date.parse(this.credentials?.created_at ?? "");
    return issued + ACCESS_TOKEN_LIFETIME_MS - EXPIRY_SKEW_MS <= Date.now();
  }

  /**
   * Rotates the device-flow pair. Under the lock: re-read the file; when
   * another process already rotated it (its access token differs from the
   * one we have), use that pair instead of spending our (now revoked)
   * refresh token. The new pair is on disk before the call goes on.
   */
  private async refresh(): Promise<void> {
    const used = this.credentials!;
    const path = credentialsPath(this.env);
    await withFileLock(`${path}.lock`, this.lockWaitMs, async () => {
      const current = readCredentials(this.env);
      if (!current) throw new NotSignedInError("signed out while this command ran; run `svc login`");
      // A `svc login` to another server meanwhile: that pair must not come here.
      if (current.server_url !== this.serverUrl) {
        throw new NotSignedInError(
          `the stored credentials were replaced while this command ran by a sign-in to ${current.server_url}; they are not sent to ${this.serverUrl}, so nothing was sent. Run the command again, or \`svc login --url ${this.serverUrl}\`.`,
        );
      }
      if (current.access_token !== used.access_token) {
        this.adopt(current);
        return;
      }
      const res = await postJson(this.serverUrl, "/auth/device/refresh", { refresh_token: current.refresh_token });
      if (res.status !== 200) {
        const code = res.body?.error;
        if (res.status === 400 || res.status === 401) {
          throw new NotSignedInError(`your session has expired or was revoked (${typeof code === "string" ? code : res.status}); run \`svc login\``);
        }
        throw apiError(res.status, res.body);
      }
      const next = credentialsFromTokenResponse(res.body, current);
      writeCredentials(next, this.env);
      this.adopt(next);
    });
  }

  private adopt(credentials: Credentials): void {
    this.credentials = credentials;
    this.token = credentials.access_token;
  }

  /** The project X-Project-Id is sent for; asks the server for the credential's own when none is selected. */
  async requireProjectId(): Promise<string> {
    if (this.projectId) return this.projectId;
    const me = await this.request<{ project: { id: string } | null }>("GET", "/api/admin/me");
    if (!me.project) {
      throw new ApiRequestError(400, "BAD_REQUEST", "No project selected", "pass --project ID, run `svc bind <project>` here, or sign in with `svc login --project ID`; `svc projects list` shows yours");
    }
    this.projectId = me.project.id;
    return this.projectId;
  }

  private async send(method: string, path: string, body: string | undefined, withoutProject = false): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: "application/json", "user-agent": `svc-cli/${VERSION}` };
    if (this.projectId && !withoutProject) headers["x-project-id"] = this.projectId;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(this.serverUrl + path, {
        method,
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new NetworkError(`could not reach ${this.serverUrl}: ${(err as Error).message}`);
    }
    await refuseRedirect(this.serverUrl, res);
    return res;
  }

  /** An authenticated /api/admin call; answers the parsed JSON body or throws ApiRequestError. */
  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await readBody(await this.exchange(method, path, options.body === undefined ? undefined : JSON.stringify(options.body), options))) as T;
  }

  /**
   * A client typed from one module's routes, as the dashboard's (Eden Treaty over their own TypeBox
   * schemas): a renamed route or body field fails `npm run typecheck` here too, not at run time.
   * Calls go through the same credential, refresh, project header and errors as `request`; times
   * stay the strings the API sends (no Date parsing). Path segments are the caller's to encode (`seg`).
   */
  // biome-ignore lint: any Elysia app type
  api<App extends Elysia<any, any, any, any, any, any, any>>(options: Omit<RequestOptions, "body"> = {}) {
    const fetcher = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
      const res = await this.exchange(init?.method ?? "GET", url.pathname + url.search, typeof init?.body === "string" ? init.body : undefined, options);
      // Eden reads the body by content type: hand it the same bytes as JSON (an empty answer, a 204, as nothing).
      const text = await res.text();
      return text === "" ? new Response(null, { status: res.status }) : new Response(text, { status: res.status, headers: { "content-type": "application/json" } });
    };
    return treaty<App>(this.serverUrl, { fetcher: fetcher as typeof fetch, parseDate: false });
  }

  /** One authorised exchange: refreshes an expired pair first, once more after a 401; answers an OK response or throws. */
  private async exchange(method: string, path: string, body: string | undefined, options: Omit<RequestOptions, "body">): Promise<Response> {
    if (options.requireProject) await this.requireProjectId();
    if (this.credentials && this.isExpired()) await this.refresh();
    let res = await this.send(method, path, body, options.withoutProject);
    if (res.status === 401 && this.credentials) {
      // The clock or the server disagreed with created_at: refresh once and retry.
      await res.body?.cancel();
      await this.refresh();
      res = await this.send(method, path, body, options.withoutProject);
    }
    if (res.ok) return res;
    const answer = await readBody(res);
    if (res.status === 401) {
      const why = apiError(res.status, answer).message;
      throw new NotSignedInError(
        this.credentialSource === "SERVICE_CLI_TOKEN"
          ? `SERVICE_CLI_TOKEN was refused (${why}): it is unknown or revoked; mint a new one or unset it`
          : `your session was refused (${why}); run \`svc login\``,
      );
    }
    const err = apiError(res.status, answer);
    err.context = {
      method,
      path,
      projectId: options.withoutProject ? null : this.projectId,
      projectSource: this.projectSource,
      bindingPath: this.bindingPath,
      credentialSource: this.credentialSource,
    };
    throw err;
  }
}

type EdenAnswer<T> = { data: T; error: null } | { data: null; error: { status: unknown; value: unknown } };

/**
 * The data of a typed call (`client.api<…>()`). Its failures were thrown by `exchange` (ApiRequestError,
 * NotSignedInError, NetworkError), which Eden catches and hands back as the error's value: thrown again here.
 */
export async function dataOf<T>(pending: Promise<EdenAnswer<T>>): Promise<T> {
  const answer = await pending;
  if (answer.error) {
    if (answer.error.value instanceof Error) throw answer.error.value;
    throw apiError(Number(answer.error.status) || 0, answer.error.value);
  }
  return answer.data as T;
}

/** One path segment of a typed call: a name as the user typed it, encoded (Eden joins segments as given). */
export const seg = (value: string): string => encodeURIComponent(value);
