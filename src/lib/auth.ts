// One piece: every credential rule (admin API, SDK keys by type and scope, browser origins and limits, sessions) lives here, so that no route can apply half of it.
import type { Env } from "./envs";
import { badRequest, forbidden, unauthorized } from "./errors";
import { randomBase62 } from "./ids";

/** What the authenticator needs to know of an SDK key (the keys module provides it). */
export type SdkKeyInfo = {
  id: string;
  projectId: string;
  type: "admin" | "client" | "server" | "browser";
  scopes: string[];
  allowedOrigin: string | null;
  /** Every browser origin the key admits (its project's domain and allowed origins); null admits any; absent: `allowedOrigin` alone. */
  allowedOrigins?: readonly string[] | null;
  /** The one env a browser key evaluates (null or absent for other types). */
  env?: Env | null;
};

/** Sees every accepted SDK request (must not throw, must not wait); see Authenticator.registerSdkObserver. */
export type SdkObserver = (principal: Principal, request: Request) => void;

/** Checks a browser key's ingest call (throws 429 or 413); see Authenticator.registerBrowserIngestGuard. */
export type BrowserIngestGuard = (principal: Principal, request: Request) => void;

/**
 * Which SDK keys a path takes:
 * - `server`: server keys only (the snapshot and the stream: every rule and salt);
 * - `client`: client keys only (the public intake);
 * - `evaluate`, `events`, `errors`: a server key, or a browser key carrying
 *   `flags:evaluate`, `events:ingest` or `errors:ingest`.
 */
export type SdkRule = "server" | "client" | "evaluate" | "events" | "errors";

const BROWSER_SCOPE_OF: Partial<Record<SdkRule, string>> = { evaluate: "flags:evaluate", events: "events:ingest", errors: "errors:ingest" };

/**
 * The SDK key lookup (the keys module implements it). `cached` answers from
 * memory only: the SDK fast paths use it and never await the store;
 * undefined means "not in memory, ask `resolve`".
 */
export interface KeyDirectory {
  cached(secret: string): SdkKeyInfo | null | undefined;
  resolve(secret: string): Promise<SdkKeyInfo | null>;
  markUsed(keyId: string): void;
}

/**
 * What a caller may do in a project:
 * - `read`: every GET;
 * - `write`: change resources (killswitches, configs, ...);
 * - `manage`: SDK keys, API tokens and project settings;
 * - `members`: invite, remove and re-role people (organisation-wide, so only
 *   an owner who signed in has it, never a key or a token).
 */
export type Permission = "read" | "write" | "manage" | "members";

/** A role in an organisation (see identity): viewer reads, editor writes, owner manages. */
export type Role = "owner" | "editor" | "viewer";

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  viewer: ["read"],
  editor: ["read", "write"],
  owner: ["read", "write", "manage", "members"],
};
/** An admin SDK key runs its own project (not its organisation's people). */
export const ADMIN_KEY_PERMISSIONS: readonly Permission[] = ["read", "write", "manage"];
/** Project API tokens (CI) read, or read and write; they never mint keys or tokens, so a leaked one cannot make itself permanent. */
export const READ_ONLY_TOKEN_PERMISSIONS: readonly Permission[] = ["read"];
export const READ_WRITE_TOKEN_PERMISSIONS: readonly Permission[] = ["read", "write"];

/** Who is calling, and for which project, once the credential has been checked. */
export type Principal = {
  kind: "admin_key" | "server_key" | "client_key" | "browser_key" | "user_token" | "api_token" | "session";
  credentialId: string;
  projectId: string;
  /** No write of any kind (a read-only token, a viewer). */
  readOnly: boolean;
  /** What the caller may do in `projectId` (SDK keys: none on /api/admin). */
  permissions: readonly Permission[];
  /** A person's role in the project's organisation. */
  role?: Role;
  /** Recorded in audit rows. */
  actor: { email: string; type: "user" | "key" | "token" };
  scopes: string[];
  /** Browser origin the credential is limited to on the SDK paths; null allows any. */
  allowedOrigin: string | null;
  /** The person behind a device-flow access token. */
  userId?: string;
  /** A browser key's env: the only one it may evaluate. */
  env?: Env;
};

/** What a bearer credential grants before a project is chosen. */
export type Credential = Omit<Principal, "projectId" | "permissions" | "readOnly" | "role"> & {
  /** Project used when the request sends no X-Project-Id. */
  defaultProjectId: string | null;
  /** What the credential may do in a project, or null when it cannot reach it at all. */
  access(projectId: string): Promise<{ permissions: readonly Permission[]; role?: Role } | null>;
};

/** An admin operation's need: `true` infers it from the method (GET reads, anything else writes). */
export type AdminAuthOptions = true | Permission | { permission?: Permission; projectHeader?: "required" };

/**
 * Resolves one family of bearer secrets (by prefix). The admin key resolver
 * is built in; device-flow access tokens and project API tokens register theirs.
 */
export type BearerResolver = { prefix: string; resolve(secret: string): Promise<Credential | null> };

/**
 * The browser's way onto /api/admin (the dashboard): a session cookie, used
 * only when the request sends no Authorization header. Identity registers it.
 */
export type SessionResolver = {
  /** The cookie's name. */
  cookie: string;
  resolve(token: string): Promise<Credential | null>;
  /**
   * A cookie rides along on any request the browser makes, so every
   * state-changing one must prove it comes from our own pages: throws
   * FORBIDDEN unless it carries the CSRF token and one of our origins.
   */
  checkWrite(request: Request): void;
};

/** One cookie's value from a Cookie header, or undefined. Malformed encodings are skipped, not fatal. */
export function cookieValue(header: string | null | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}


const PROJECT_HEADER_MAX = 128;

/** "an admin", "a server": key kinds in messages. */
function withArticle(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

/** Where each type of key belongs. */
const KEY_HOME: Record<SdkKeyInfo["type"], string> = {
  admin: "an admin key belongs in `Authorization: Bearer` on the admin API (/api/admin)",
  client: "a client key belongs in X-SDK-Key on the public intake (/ops/bug, /ops/feature-request)",
  server: "a server key belongs in X-SDK-Key on the SDK paths (/api/sdk/v1, /ofrep/v1)",
  browser:
    "a browser key gets evaluated answers only (OFREP /ofrep/v1, GrowthBook remote evaluation /api/eval) and sends events and errors; the snapshot and the stream hold every rule and salt, so they take a server key",
};

/** Where the key that was sent belongs, and which key this path takes. */
function wrongKeyDetail(wanted: string, sent: SdkKeyInfo["type"]): string {
  return `X-SDK-Key: send ${wanted} here; ${KEY_HOME[sent]}`;
}

const NO_PERMISSIONS: readonly Permission[] = [];

/** The keys a rule takes, in words: "a server key", "a server or browser key". */
function wantedKeys(rule: SdkRule): string {
  return rule === "client" ? "a client key" : rule === "server" ? "a server key" : "a server or browser key";
}

function keyCredential(key: SdkKeyInfo, kind: Principal["kind"]): Credential {
  const permissions = kind === "admin_key" ? ADMIN_KEY_PERMISSIONS : NO_PERMISSIONS;
  return {
    kind,
    credentialId: key.id,
    defaultProjectId: key.projectId,
    access: async (projectId) => (projectId === key.projectId ? { permissions } : null),
    actor: { email: `${key.type}-key:${key.id}@keys.local`, type: "key" },
    scopes: key.scopes,
    allowedOrigin: key.allowedOrigin,
  };
}

function sdkSecret(headers: Record<string, string | undefined>): string | null {
  return headers["x-sdk-key"]?.trim() || bearerSecret(headers.authorization);
}

function bearerSecret(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1]! : null;
}

/** Picks the project of the request: X-Project-Id when sent (must be reachable), else the credential's own. */
function chooseProject(credential: Credential, header: string | undefined, required: boolean): string {
  if (header === undefined || header === "") {
    if (required) throw badRequest("X-Project-Id header is required on this operation", "X-Project-Id: send the id of the project this call is for");
    if (!credential.defaultProjectId) {
      throw badRequest("No project selected", "X-Project-Id: send the id of the project this call is for");
    }
    return credential.defaultProjectId;
  }
  if (header.length > PROJECT_HEADER_MAX) throw badRequest("X-Project-Id is too long", "X-Project-Id: at most 128 characters");
  return header;
}

const READ_METHODS = new Set(["GET", "HEAD"]);

function requiredPermission(options: AdminAuthOptions, method: string): Permission {
  const declared = typeof options === "string" ? options : options === true ? undefined : options.permission;
  return declared ?? (READ_METHODS.has(method) ? "read" : "write");
}

/** Why a credential that reaches the project may not do this, in words that say what would. */
function refusal(credential: Credential, needed: Permission, role: Role | undefined) {
  if (credential.kind === "api_token") {
    if (needed === "write") return forbidden("This token is read-only", "Create a read-write token to make changes");
    return forbidden(
      "API tokens cannot manage keys, tokens, members or settings",
      "Authorization: use an admin key, or sign in as an owner with `svc login`",
    );
  }
  if (credential.kind === "admin_key") {
    return forbidden(
      "SDK keys cannot add, remove or re-role people: membership spans the whole organisation",
      "Sign in as an owner of the organisation (`svc login`, or the browser) to manage members",
    );
  }
  const what = needed === "write" ? "make changes" : needed === "manage" ? "manage keys, tokens and settings" : "manage members";
  const who = needed === "write" ? "an editor or owner" : "an owner";
  return forbidden(`Your role (${role ?? "none"}) cannot ${what}`, `Ask an owner of the organisation to make you ${who}`);
}

export class Authenticator {
  private readonly resolvers: BearerResolver[] = [];
  private readonly keyPrincipals = new WeakMap<SdkKeyInfo, Principal>();
  /** Elysia JSON-stringifies plugin seeds; one short id per authenticator is enough to tell apps apart. */
  private readonly seedId = randomBase62(12);
  toJSON(): string {
    return this.seedId;
  }

  constructor(private readonly keys: KeyDirectory) {
    this.register({
      prefix: "sdk_",
      resolve: async (secret) => {
        const key = keys.cached(secret) ?? (await keys.resolve(secret));
        if (!key) return null;
        return keyCredential(key, `${key.type}_key` as Principal["kind"]);
      },
    });
  }

  register(resolver: BearerResolver): void {
    this.resolvers.push(resolver);
  }

  /** Registrations that need modules' services, made when a credential first needs a resolver (registerLater). */
  private readonly later: (() => void)[] = [];

  /**
   * `register` runs before the first bearer secret or session cookie is resolved: the modules' resolvers need
   * their services, which are made on first use (src/app.ts), and a server's start need not make them.
   */
  registerLater(register: () => void): void {
    this.later.push(register);
  }

  private registerPending(): void {
    while (this.later.length > 0) this.later.shift()!();
  }

  private session: SessionResolver | null = null;

  registerSession(resolver: SessionResolver): void {
    this.session = resolver;
  }

  private browserIngestGuard: BrowserIngestGuard | null = null;

  /** What checks a browser key's ingest calls (rates, body cap) once the key is known: the keys module's. */
  registerBrowserIngestGuard(guard: BrowserIngestGuard): void {
    this.browserIngestGuard = guard;
  }

  private sdkObserver: SdkObserver | null = null;

  /** What notes the SDK requests it accepts (the relays module: edge relays name themselves in X-Svc-Relay). */
  registerSdkObserver(observer: SdkObserver): void {
    this.sdkObserver = observer;
  }

  private async resolveBearer(secret: string): Promise<Credential | null> {
    this.registerPending();
    for (const r of this.resolvers) if (secret.startsWith(r.prefix)) return r.resolve(secret);
    return null;
  }

  /** The /api/admin rule: admin keys, user access tokens, project API tokens, and the dashboard's session cookie. */
  async admin(request: Request, headers: Record<string, string | undefined>, options: AdminAuthOptions): Promise<Principal> {
    return this.forProject(await this.identify(request, headers), headers, request.method, options);
  }

  /** The admin credential of a request, before any project is chosen (`/me` answers without one). */
  async identify(request: Request, headers: Record<string, string | undefined>): Promise<Credential> {
    this.registerPending();
    if (!headers.authorization && this.session) {
      const token = cookieValue(headers.cookie, this.session.cookie);
      if (token) return this.identifySession(request, token);
    }
    const secret = bearerSecret(headers.authorization);
    if (!secret) {
      // An admin key in the SDK's header: say where it goes instead of only that nothing came.
      if (headers["x-sdk-key"]?.trim().startsWith("sdk_admin_")) {
        throw unauthorized("An admin key goes in the Authorization header, not X-SDK-Key", "Authorization: send `Bearer <admin key>`; X-SDK-Key carries server keys, on the SDK paths (/api/sdk/v1, /ofrep/v1)");
      }
      throw unauthorized("Missing credentials", "Authorization: send `Bearer <admin key or access token>`, or sign in at /signin");
    }
    const credential = await this.resolveBearer(secret);
    if (!credential) throw unauthorized("Invalid or revoked credentials");
    if (credential.kind === "server_key" || credential.kind === "client_key" || credential.kind === "browser_key") {
      const kind = credential.kind.slice(0, -"_key".length) as SdkKeyInfo["type"];
      throw forbidden(`A ${kind} key cannot use the admin API`, `Authorization: the admin API takes an admin key, an access token or a project API token; ${KEY_HOME[kind]}`);
    }
    return credential;
  }

  private async identifySession(request: Request, token: string): Promise<Credential> {
    const session = this.session!;
    // The CSRF and origin check comes first: a forged request learns nothing, not even whether the session is live.
    if (!READ_METHODS.has(request.method)) session.checkWrite(request);
    const credential = await session.resolve(token);
    if (!credential) throw unauthorized("Your session has ended", "Sign in again at /signin");
    return credential;
  }

  /** Picks the request's project for an identified credential and applies the admin rules (reach, then permission). */
  async forProject(credential: Credential, headers: Record<string, string | undefined>, method: string, options: AdminAuthOptions): Promise<Principal> {
    const required = typeof options === "object" && options.projectHeader === "required";
    const projectId = chooseProject(credential, headers["x-project-id"], required);
    const access = await credential.access(projectId);
    if (!access) throw forbidden("This credential is not allowed on that project", `X-Project-Id: ${projectId}`);
    const needed = requiredPermission(options, method);
    if (!access.permissions.includes(needed)) throw refusal(credential, needed, access.role);
    if (credential.kind === "admin_key") this.keys.markUsed(credential.credentialId);
    const { defaultProjectId: _d, access: _a, ...rest } = credential;
    const principal: Principal = { ...rest, projectId, permissions: access.permissions, readOnly: !access.permissions.includes("write") };
    if (access.role) principal.role = access.role;
    return principal;
  }

  /**
   * The SDK rule: an SDK key in `X-SDK-Key` or as a bearer secret, of a type
   * (and, for browser keys, a scope) the path takes (`SdkRule`). No
   * X-Project-Id: the project is the key's own. A browser request from an
   * origin the key does not allow is refused.
   */
  async sdk(headers: Record<string, string | undefined>, rule: SdkRule, request?: Request): Promise<Principal> {
    const secret = sdkSecret(headers);
    if (!secret) throw unauthorized("Missing SDK key", `X-SDK-Key: send ${wantedKeys(rule)}`);
    const key = secret.startsWith("sdk_") ? (this.keys.cached(secret) ?? (await this.keys.resolve(secret))) : null;
    const principal = this.sdkPrincipal(key, headers, rule);
    // A browser key's events and errors: rate and body limits before anything reads the body further.
    if (request && principal.kind === "browser_key" && (rule === "events" || rule === "errors")) this.browserIngestGuard?.(principal, request);
    if (request && this.sdkObserver) {
      try {
        this.sdkObserver(principal, request);
      } catch {
        // An observer only notes; the request goes on whatever it does.
      }
    }
    return principal;
  }

  /**
   * The SDK rule answered from memory only (the snapshot fast path): the
   * principal, or undefined when the key is not in memory (ask `sdk`).
   * Throws the same errors as `sdk`.
   */
  sdkFromMemory(headers: Record<string, string | undefined>, rule: SdkRule): Principal | undefined {
    const secret = sdkSecret(headers);
    if (!secret) throw unauthorized("Missing SDK key", `X-SDK-Key: send ${wantedKeys(rule)}`);
    const key = secret.startsWith("sdk_") ? this.keys.cached(secret) : null;
    if (key === undefined) return undefined;
    return this.sdkPrincipal(key, headers, rule);
  }

  private sdkPrincipal(key: SdkKeyInfo | null, headers: Record<string, string | undefined>, rule: SdkRule): Principal {
    if (!key) throw unauthorized("Invalid or revoked SDK key");
    const scope = BROWSER_SCOPE_OF[rule];
    const typeFits = rule === "client" ? key.type === "client" : key.type === "server" || (key.type === "browser" && scope !== undefined);
    if (!typeFits) throw forbidden(`This path takes ${wantedKeys(rule)}, not ${withArticle(key.type)} key`, wrongKeyDetail(wantedKeys(rule), key.type));
    if (key.type === "browser" && !key.scopes.includes(scope!)) {
      throw forbidden(`This browser key lacks the ${scope} scope`, `scopes: mint a browser key with ${scope} (the default gives all three)`);
    }
    const origin = headers.origin;
    const admitted = key.allowedOrigins !== undefined ? key.allowedOrigins : key.allowedOrigin ? [key.allowedOrigin] : null;
    if (origin && admitted && !admitted.includes(origin)) {
      throw forbidden("Origin not allowed for this key", `Origin: ${origin} is not the project's domain or one of its allowed origins (Settings, allowedOrigins)`);
    }
    const projectHeader = headers["x-project-id"];
    if (projectHeader && projectHeader !== key.projectId) throw forbidden("This key is not allowed on that project", `X-Project-Id: ${projectHeader}`);
    this.keys.markUsed(key.id);
    return this.keyPrincipal(key);
  }

  /**
   * A key's principal never changes while the key is cached, so it is built
   * once per resolution: the SDK paths run this on every poll. Callers treat
   * principals as read-only.
   */
  private keyPrincipal(key: SdkKeyInfo): Principal {
    let principal = this.keyPrincipals.get(key);
    if (!principal) {
      const { defaultProjectId: _d, access: _a, ...rest } = keyCredential(key, `${key.type}_key` as Principal["kind"]);
      principal = { ...rest, projectId: key.projectId, permissions: NO_PERMISSIONS, readOnly: true };
      if (key.type === "browser" && key.env) principal.env = key.env;
      this.keyPrincipals.set(key, principal);
    }
    return principal;
  }
}
