import { Elysia } from "elysia";
import { createBunRouteHandler } from "elysia/adapter/bun/compose";
import { ApiError } from "./lib/errors";
import { requestIdFor } from "./lib/http-values";
import {
  BODY_READ_TIMEOUT_MS,
  BodyReads,
  MAX_BODY_DEPTH,
  MAX_BODY_READS,
  MAX_BODY_READS_PER_CLIENT,
  type RequestMeta,
  CORS_EXPOSED,
  bufferBody,
  errorResponse,
  isApiPath,
  isCorsPath,
  isEdgePath,
  loggedPath,
  oversized,
  pathOf,
  refusedBodies,
  tooDeep,
  validationDetail,
} from "./lib/pipeline";
import { UNMATCHED_ROUTE, isMetricsScrape, isSdkPollPath } from "./lib/metrics";
import type { AppContext } from "./lib/module";
import { isBusyError, isPostgresUnavailable } from "./lib/store";
import { systemRoutes } from "./modules/system/routes";
import { ModuleRouteLoader } from "./route-loading";
import { openapiRoutes } from "./modules/system/openapi";

export type { AppContext, AppOptions, Services } from "./lib/module";
export { closeServices, createContext, createServices, madeServices, makeEveryService } from "./context";
/** For a server's route loader, made before the app (src/server.ts). */
export { createBunRouteHandler };

/**
 * The app on `ctx`. `onFirstAnswer` is called once, when the first answer is counted (startServer holds back
 * until then the work that answer need not wait for). The modules' routes are added on demand (src/route-loading.ts):
 * `routeLoaderOf(app)` gives the stand-ins a server puts in Bun's native table; without a server (`app.handle`),
 * `ctx.addAllRoutes()` adds them all. A server passes its own `loader`, made before the app (its stand-ins are in
 * Bun's table before the app is built).
 */
export function buildApp(ctx: AppContext, onFirstAnswer?: () => void, loader?: ModuleRouteLoader) {
  const app = buildPipeline(ctx, onFirstAnswer)
    // The API reference (/openapi), its bundle and the OpenAPI document (/openapi/json, `servers` per request).
    .use(openapiRoutes(ctx))
    .use(systemRoutes(ctx));
  const routes = loader ?? new ModuleRouteLoader(app, ctx, createBunRouteHandler);
  loaders.set(app, routes);
  ctx.addAllRoutes = () => routes.addAll();
  ctx.addRoutesFor = (method, path) => routes.addFor(method, path);
  return app;
}

const loaders = new WeakMap<object, ModuleRouteLoader>();

/** What adds `app`'s module routes (buildApp). */
export function routeLoaderOf(app: App): ModuleRouteLoader {
  return loaders.get(app)!;
}

/**
 * The request pipeline without routes: body limits, request ids, CORS, error bodies, counting and logging.
 * `buildApp` adds the modules; an edge relay (src/modules/relays/edge) adds its own few routes to the same pipeline.
 */
export function buildPipeline(ctx: AppContext, onFirstAnswer?: () => void) {
  const meta = new WeakMap<Request, RequestMeta>();
  const { log, options } = ctx;
  const telemetry = ctx.services.operations.telemetry;
  let firstAnswer = onFirstAnswer;
  const limits = options.bodyReads;
  const bodyReads = new BodyReads(
    { timeoutMs: limits?.timeoutMs ?? BODY_READ_TIMEOUT_MS, max: limits?.max ?? MAX_BODY_READS, perClient: limits?.perClient ?? MAX_BODY_READS_PER_CLIENT },
    telemetry.bodies,
  );
  const clientOf = (request: Request) => () => ctx.network.clientAddress(request);
  /**
   * Every answered request is counted for /metrics by route template (`route`, unknown for answers given before
   * routing) and logged, but for SDK polls (snapshot, stream, OFREP) that succeeded: those are counted only,
   * unless `--log-sdk-requests` (at thousands a second they would drown every admin line).
   */
  const finish = (request: Request, m: RequestMeta, status: number, route: string | undefined) => {
    const ms = performance.now() - m.start;
    telemetry.request(request.method, route || UNMATCHED_ROUTE, status, ms / 1000);
    if (firstAnswer) {
      const answered = firstAnswer;
      firstAnswer = undefined;
      answered();
    }
    if (!log.requests || (status < 400 && !log.sdkRequests && isSdkPollPath(m.path))) return;
    log.request({ method: request.method, path: loggedPath(m.path), status, durationMs: Math.round(ms * 1000) / 1000, requestId: m.id });
  };
  // Elysia runs no afterResponse hook for a Response returned by onRequest: such answers are counted and logged here.
  const answerEarly = (request: Request, m: RequestMeta, response: Response) => {
    finish(request, m, response.status, undefined);
    return response;
  };

  // The app being built, for the onRequest hook that hands a request back to it (set once built, before any request).
  let self: { fetch(request: Request): Response | Promise<Response> } | undefined;
  const app =
    // No normalisation: a body field no schema declares is refused by name (every body is a BodyObject), a
    // wrong type is refused, and nothing is silently dropped or turned into `{}` (Elysia's default,
    // "exactMirror", made `5`, `[]` or `null` sent for an object field into `{}`).
    new Elysia({ normalize: false })
      .wrap(
        (handle, request) =>
          // Every body is read (size-limited, with a deadline and a place among the bodies read at once) and scanned for
          // nesting before any parser sees it; body-less requests pass untouched.
          (request.body && request.method !== "GET" && request.method !== "HEAD"
            ? async () => handle(await bufferBody(request, options.maxBodyBytes, bodyReads, clientOf(request)))
            : handle) as ReturnType<typeof handle>,
      )
      .onRequest(({ request, set }) => {
        const path = pathOf(request.url);
        // A module's route this request needs, not added yet, that Bun's table could not stand in for: added now,
        // and the request handed to the app again, which answers it as a full start would (src/route-loading.ts).
        if (ctx.addRoutesFor?.(request.method, path)) return self!.fetch(request);
        const id = requestIdFor(request.headers.get("x-request-id"));
        const m: RequestMeta = { start: performance.now(), id, path };
        meta.set(request, m);
        set.headers["x-request-id"] = id;
        if (options.edgeOnly && !isEdgePath(m.path)) {
          return answerEarly(request, m, errorResponse(404, { error: "This server runs the edge role only (public intake under /ops)", code: "NOT_FOUND" }, m));
        }

        const length = request.headers.get("content-length");
        if (oversized.has(request) || (length !== null && Number(length) > options.maxBodyBytes)) {
          return answerEarly(request, m, errorResponse(413, { error: "Body too large", code: "BAD_REQUEST", detail: `at most ${options.maxBodyBytes} bytes` }, m));
        }
        // Its body came too slowly, or too many were being read (BodyReads).
        const refused = refusedBodies.get(request);
        if (refused) return answerEarly(request, m, errorResponse(refused.status, refused.body, m, refused.headers));
        if (tooDeep.has(request)) {
          return answerEarly(
            request,
            m,
            errorResponse(400, { error: "Body nested too deeply", code: "BAD_REQUEST", detail: `body: at most ${MAX_BODY_DEPTH} levels of arrays/objects` }, m),
          );
        }
        // Sign-in pages and links answer only on our own host names (no magic link may point at someone else's).
        // A Prometheus scrape of /metrics is a machine client too: it names the server as its config does (`svc:8080`).
        if (!isApiPath(m.path) && !isMetricsScrape(m.path, request)) {
          const refused = ctx.network.checkBrowserHost(request);
          if (refused) return answerEarly(request, m, errorResponse(refused.status, refused.toBody(), m));
        }
        const origin = request.headers.get("origin");
        if (origin && isCorsPath(m.path)) {
          // Which origins a key admits is enforced by the sdk auth macro; here the browser is answered: the origin is
          // approved only when some project admits it (a preflight carries no key), and credentials never are.
          set.headers["vary"] = "Origin";
          return ctx.services.projects.isCorsOrigin(origin).then((admitted) => {
            if (admitted) {
              set.headers["access-control-allow-origin"] = origin;
              set.headers["access-control-expose-headers"] = CORS_EXPOSED;
            }
            if (request.method !== "OPTIONS") return;
            const headers: Record<string, string> = { vary: "Origin", "x-request-id": id };
            if (admitted) {
              headers["access-control-allow-origin"] = origin;
              headers["access-control-allow-methods"] = "GET, POST, OPTIONS";
              headers["access-control-allow-headers"] = "Authorization, Content-Type, X-SDK-Key, If-None-Match, Last-Event-ID, X-Request-Id, X-Sentry-Auth";
              headers["access-control-max-age"] = "600";
            }
            return answerEarly(request, m, new Response(null, { status: 204, headers }));
          });
        }
      })
      .onError(({ code, error, request }) => {
        const m = meta.get(request);
        if (oversized.has(request)) {
          return errorResponse(413, { error: "Body too large", code: "BAD_REQUEST", detail: `at most ${options.maxBodyBytes} bytes` }, m);
        }
        const refused = refusedBodies.get(request);
        if (refused) return errorResponse(refused.status, refused.body, m, refused.headers);
        if (error instanceof ApiError) {
          return errorResponse(error.status, error.toBody(), m, error.headers);
        }
        // The store is busy (another process holds the SQLite write lock) or PostgreSQL is unreachable.
        if (isBusyError(error) || isPostgresUnavailable(error)) return errorResponse(503, { error: "Unavailable" }, m, { "Retry-After": "1" });
        switch (code) {
          case "VALIDATION": {
            const type = (error as { type?: string }).type;
            if (type === "response") {
              log.error("response failed its schema", { path: loggedPath(pathOf(request.url)), detail: validationDetail(error) });
              return errorResponse(500, { error: "Internal error", code: "INTERNAL" }, m);
            }
            return errorResponse(400, { error: "Request failed validation", code: "VALIDATION", detail: validationDetail(error) }, m);
          }
          case "PARSE":
            return errorResponse(400, { error: "Malformed request body", code: "BAD_REQUEST", detail: "body: expected valid JSON (Content-Type: application/json)" }, m);
          case "NOT_FOUND":
            return errorResponse(404, { error: `No route for ${request.method} ${loggedPath(pathOf(request.url))}`, code: "NOT_FOUND" }, m);
          case "INVALID_COOKIE_SIGNATURE":
            return errorResponse(401, { error: "Invalid session", code: "UNAUTHORIZED" }, m);
          default: {
            // Our bug, whatever it is: logged with the request id the client was given, answered without internals.
            const message = error instanceof Error ? error.message : String(error);
            log.error("unexpected error", {
              requestId: m?.id,
              method: request.method,
              path: loggedPath(pathOf(request.url)),
              code: String(code),
              error: message.slice(0, 1000),
              stack: error instanceof Error ? error.stack?.slice(0, 4000) : undefined,
            });
            return errorResponse(500, { error: "Internal error", code: "INTERNAL", detail: `request id ${m?.id ?? "unknown"}` }, m);
          }
        }
      })
      // Destructured (not a whole `context`): Elysia reads which fields a hook uses and parses only those per request.
      .onAfterResponse(({ request, set, route, responseValue }) => {
        const m = meta.get(request);
        if (!m) return;
        // A handler's own Response (the snapshot's 304, OFREP) carries its status; `set.status` would still say 200.
        const status = m.status ?? (responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : Number(set.status) || 200);
        finish(request, m, status, route);
      });
  self = app;
  return app;
}

export type App = ReturnType<typeof buildApp>;
