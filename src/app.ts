import { Elysia } from "elysia";
import { Authenticator, authPlugin } from "./lib/auth";
import type { Db } from "./lib/db";
import { ApiError } from "./lib/errors";
import { randomBase62 } from "./lib/ids";
import { requestIdFor } from "./lib/http";
import {
  MAX_BODY_DEPTH,
  type RequestMeta,
  bufferBody,
  errorResponse,
  isApiPath,
  isCorsPath,
  isEdgePath,
  oversized,
  pathOf,
  tooDeep,
  validationDetail,
} from "./lib/pipeline";
import { isBusyError } from "./lib/db";
import { createLogger, type Logger } from "./lib/log";
import { Network, type NetworkOptions } from "./lib/network";
import { KeysService } from "./modules/keys/service";
import { ProjectsService } from "./modules/projects/service";
import { RevisionsService } from "./modules/delivery/revisions";
import { SnapshotService } from "./modules/delivery/snapshot";
import { deliveryRoutes } from "./modules/delivery/routes";
import { KillswitchesService } from "./modules/killswitches/service";
import { killswitchRoutes } from "./modules/killswitches/routes";
import { ConfigsService } from "./modules/configs/service";
import { configRoutes } from "./modules/configs/routes";
import { keyRoutes } from "./modules/keys/routes";
import { projectRoutes } from "./modules/projects/routes";
import { systemRoutes } from "./modules/system/routes";
import { openapiRoutes } from "./modules/system/openapi";
import { IdentityService } from "./modules/identity/service";
import { identityRoutes } from "./modules/identity/routes";
import type { SignInOptions } from "./modules/identity/options";
import { DeviceService } from "./modules/device/service";
import { deviceRoutes } from "./modules/device/routes";
import { TokensService } from "./modules/tokens/service";
import { tokenRoutes } from "./modules/tokens/routes";

export type AppOptions = {
  /** Largest request body accepted, in bytes (413 `Body too large` above). */
  maxBodyBytes: number;
  /** How often SDK key last-used stamps are written. */
  lastUsedFlushMs?: number;
  /** `svc serve --edge-only`: answer only the public intake (/ops) and /healthz. */
  edgeOnly?: boolean;
  /** Interval of the SSE stream's keep-alive comment (default 15 s). */
  streamHeartbeatMs?: number;
  /** Open SSE streams one SDK key may hold (default 500). */
  maxStreamsPerKey?: number;
  /** Browser sign-in, mail, OIDC and the sign-in clock. */
  signIn?: SignInOptions;
  /** SERVICE_PUBLIC_URL, SERVICE_ALLOWED_HOSTS, SERVICE_TRUSTED_PROXIES. */
  network?: NetworkOptions;
};

export type Services = {
  keys: KeysService;
  projects: ProjectsService;
  revisions: RevisionsService;
  killswitches: KillswitchesService;
  snapshots: SnapshotService;
  configs: ConfigsService;
  identity: IdentityService;
  device: DeviceService;
  tokens: TokensService;
};

export type AppContext = {
  db: Db;
  services: Services;
  authenticator: Authenticator;
  auth: ReturnType<typeof authPlugin>;
  log: Logger;
  options: AppOptions;
  /** Aborted when the server begins to shut down: long-lived responses (streams) end on it. */
  shutdown: AbortSignal;
  /** Our host names, the public origin of links, and trusted proxies. */
  network: Network;
  /**
   * Modules pass the context as their Elysia plugin `seed`, which Elysia
   * JSON-stringifies to dedupe plugins per app: this keeps that to one short
   * id instead of walking every service (some hold cyclic objects).
   */
  toJSON(): string;
};

export function createServices(db: Db, options: Pick<AppOptions, "lastUsedFlushMs" | "signIn"> = {}, log: Logger = createLogger({ requests: false })): Services {
  const keys = new KeysService(db, { lastUsedFlushMs: options.lastUsedFlushMs, log });
  const projects = new ProjectsService(db, keys);
  const revisions = new RevisionsService(db, { log });
  const killswitches = new KillswitchesService(db, revisions);
  const configs = new ConfigsService(db, revisions);
  const snapshots = new SnapshotService(db, revisions, projects, {
    killswitches: (projectId, env) => killswitches.publishedForEnv(projectId, env),
    configs: (projectId, env) => configs.publishedForEnv(projectId, env),
  }, log);
  const identity = new IdentityService(db, projects, options.signIn, log);
  const device = new DeviceService(db, identity);
  const tokens = new TokensService(db);
  return { keys, projects, revisions, killswitches, snapshots, configs, identity, device, tokens };
}

/** Stops every service timer and flushes what they buffer; the database is closed by the caller. */
export function closeServices(services: Services): void {
  services.keys.close();
  services.revisions.close();
  services.snapshots.close();
}

export function createContext(db: Db, log: Logger, options: AppOptions, shutdown: AbortSignal = new AbortController().signal): AppContext {
  const services = createServices(db, options, log);
  const authenticator = new Authenticator(services.keys);
  authenticator.register(services.device.bearerResolver());
  authenticator.register(services.tokens.bearerResolver());
  const id = randomBase62(12);
  const network = new Network(options.network);
  return { db, services, authenticator, auth: authPlugin(authenticator), log, options, shutdown, network, toJSON: () => id };
}

export function buildApp(ctx: AppContext) {
  const meta = new WeakMap<Request, RequestMeta>();
  const { log, options } = ctx;
  const logRequest = (request: Request, m: RequestMeta, status: number) => {
    if (!log.requests) return;
    log.request({ method: request.method, path: m.path, status, durationMs: Math.round((performance.now() - m.start) * 1000) / 1000, requestId: m.id });
  };
  // Elysia runs no afterResponse hook for a Response returned by onRequest: such answers are logged here.
  const answerEarly = (request: Request, m: RequestMeta, response: Response) => {
    logRequest(request, m, response.status);
    return response;
  };

  return (
    // No normalisation: a body field no schema declares is refused by name (every body is a BodyObject), a
    // wrong type is refused, and nothing is silently dropped or turned into `{}` (Elysia's default,
    // "exactMirror", made `5`, `[]` or `null` sent for an object field into `{}`).
    new Elysia({ normalize: false })
      .wrap(
        (handle, request) =>
          // Every body is read (size-limited) and scanned for nesting before any parser sees it; body-less requests pass untouched.
          (request.body && request.method !== "GET" && request.method !== "HEAD"
            ? async () => handle(await bufferBody(request, options.maxBodyBytes))
            : handle) as ReturnType<typeof handle>,
      )
      .onRequest(({ request, set }) => {
        const id = requestIdFor(request.headers.get("x-request-id"));
        const m: RequestMeta = { start: performance.now(), id, path: pathOf(request.url) };
        meta.set(request, m);
        set.headers["x-request-id"] = id;
        if (options.edgeOnly && !isEdgePath(m.path)) {
          return answerEarly(request, m, errorResponse(404, { error: "This server runs the edge role only (public intake under /ops)", code: "NOT_FOUND" }, m));
        }

        const length = request.headers.get("content-length");
        if (oversized.has(request) || (length !== null && Number(length) > options.maxBodyBytes)) {
          return answerEarly(request, m, errorResponse(413, { error: "Body too large", code: "BAD_REQUEST", detail: `at most ${options.maxBodyBytes} bytes` }, m));
        }
        if (tooDeep.has(request)) {
          return answerEarly(
            request,
            m,
            errorResponse(400, { error: "Body nested too deeply", code: "BAD_REQUEST", detail: `body: at most ${MAX_BODY_DEPTH} levels of arrays/objects` }, m),
          );
        }
        // Sign-in pages and links answer only on our own host names (no magic link may point at someone else's).
        if (!isApiPath(m.path)) {
          const refused = ctx.network.checkBrowserHost(request);
          if (refused) return answerEarly(request, m, errorResponse(refused.status, refused.toBody(), m));
        }
        const origin = request.headers.get("origin");
        if (origin && isCorsPath(m.path)) {
          // The key's allowed origin is enforced by the sdk auth macro; here we only answer the browser.
          set.headers["access-control-allow-origin"] = origin;
          set.headers["vary"] = "Origin";
          set.headers["access-control-expose-headers"] = "ETag, X-Request-Id, Retry-After";
          if (request.method === "OPTIONS") {
            return answerEarly(request, m, new Response(null, {
              status: 204,
              headers: {
                "access-control-allow-origin": origin,
                "access-control-allow-methods": "GET, POST, OPTIONS",
                "access-control-allow-headers": "Authorization, Content-Type, X-SDK-Key, If-None-Match, Last-Event-ID, X-Request-Id",
                "access-control-max-age": "600",
                vary: "Origin",
                "x-request-id": id,
              },
            }));
          }
        }
      })
      .onError(({ code, error, request }) => {
        const m = meta.get(request);
        if (oversized.has(request)) {
          return errorResponse(413, { error: "Body too large", code: "BAD_REQUEST", detail: `at most ${options.maxBodyBytes} bytes` }, m);
        }
        if (error instanceof ApiError) {
          return errorResponse(error.status, error.toBody(), m, error.headers);
        }
        // Another process holds the SQLite write lock (a write outside writeTransaction gave up at once).
        if (isBusyError(error)) return errorResponse(503, { error: "Unavailable" }, m, { "Retry-After": "1" });
        switch (code) {
          case "VALIDATION": {
            const type = (error as { type?: string }).type;
            if (type === "response") {
              log.error("response failed its schema", { path: pathOf(request.url), detail: validationDetail(error) });
              return errorResponse(500, { error: "Internal error", code: "INTERNAL" }, m);
            }
            return errorResponse(400, { error: "Request failed validation", code: "VALIDATION", detail: validationDetail(error) }, m);
          }
          case "PARSE":
            return errorResponse(400, { error: "Malformed request body", code: "BAD_REQUEST", detail: "body: expected valid JSON (Content-Type: application/json)" }, m);
          case "NOT_FOUND":
            return errorResponse(404, { error: `No route for ${request.method} ${pathOf(request.url)}`, code: "NOT_FOUND" }, m);
          case "INVALID_COOKIE_SIGNATURE":
            return errorResponse(401, { error: "Invalid session", code: "UNAUTHORIZED" }, m);
          default: {
            // Our bug, whatever it is: logged with the request id the client was given, answered without internals.
            const message = error instanceof Error ? error.message : String(error);
            log.error("unexpected error", {
              requestId: m?.id,
              method: request.method,
              path: pathOf(request.url),
              code: String(code),
              error: message.slice(0, 1000),
              stack: error instanceof Error ? error.stack?.slice(0, 4000) : undefined,
            });
            return errorResponse(500, { error: "Internal error", code: "INTERNAL", detail: `request id ${m?.id ?? "unknown"}` }, m);
          }
        }
      })
      .onAfterResponse(({ request, set }) => {
        const m = meta.get(request);
        if (!m) return;
        logRequest(request, m, m.status ?? (typeof set.status === "number" ? set.status : Number(set.status) || 200));
      })
      // The API reference (/openapi), its bundle and the OpenAPI document (/openapi/json, `servers` per request).
      .use(openapiRoutes(ctx))
      .use(systemRoutes(ctx))
      .use(projectRoutes(ctx))
      .use(keyRoutes(ctx))
      .use(killswitchRoutes(ctx))
      .use(deliveryRoutes(ctx))
      .use(configRoutes(ctx))
      .use(identityRoutes(ctx))
      .use(deviceRoutes(ctx))
      .use(tokenRoutes(ctx))
  );
}

export type App = ReturnType<typeof buildApp>;
