import { ENVS, type Env } from "../../lib/envs";
import { requestIdFor } from "../../lib/http-values";
import type { AppContext } from "../../lib/module";
import { envParam } from "../delivery/fast-path";
import type { SnapshotEntry } from "../delivery/snapshot";
import { KEYS_CHANNEL } from "../keys/service";
import { featuresResponse } from "./prepared";

const FEATURES_ROUTE = "/api/features/:key";
/** How long an accepted key is trusted from this path's own memory (key announcements clear it at once). */
const KNOWN_MS = 1000;
const KNOWN_MAX = 10_000;

type Fallback = (request: Request) => Response | Promise<Response>;

/**
 * `GET /api/features/{key}` answered by Bun's native router, as the snapshot's own fast path
 * (src/modules/delivery/fast-path.ts, which says why): the prepared payload or a 304, with the same key
 * check (from memory only), headers and /metrics series as the Elysia route. Anything else (a browser
 * Origin, a bad env, a key or snapshot not in memory, any refusal) goes to the Elysia route, which renders
 * and logs errors.
 */
export function growthbookFastRoutes(ctx: AppContext, fallback: Fallback) {
  const { authenticator, services, log } = ctx;
  const series = services.operations.telemetry.series("GET", FEATURES_ROUTE);
  const notModified = series.byStatusOf(304);
  const ok = series.byStatusOf(200);
  const authHeaders: Record<string, string | undefined> = { "x-sdk-key": undefined, authorization: undefined, "x-project-id": undefined };
  /** Keys accepted within the last KNOWN_MS, with the snapshot map's key per env made once. */
  const known = new Map<string, { projectId: string; until: number; keys: Record<Env, string> }>();
  ctx.store.listen(KEYS_CHANNEL, () => known.clear());

  const handle = (request: Request & { params?: Record<string, string> }): Response | Promise<Response> => {
    const start = performance.now();
    const h = request.headers;
    if (h.has("origin") || h.has("content-length")) return fallback(request);
    const env = envParam(request.url);
    const sdkKey = request.params?.key;
    if (env === null || !sdkKey) return fallback(request);
    let projectId: string;
    const seen = known.get(sdkKey);
    if (seen !== undefined && seen.until > start) {
      const entry = env === undefined ? undefined : services.snapshots.cachedByKey(seen.keys[env]);
      if (entry !== undefined) return answer(h, entry, start);
      projectId = seen.projectId;
    } else {
      try {
        authHeaders["x-sdk-key"] = sdkKey;
        const principal = authenticator.sdkFromMemory(authHeaders, "server");
        if (!principal) return fallback(request);
        projectId = principal.projectId;
        if (known.size >= KNOWN_MAX) known.clear();
        known.set(sdkKey, { projectId, until: start + KNOWN_MS, keys: Object.fromEntries(ENVS.map((e) => [e, `${projectId}/${e}`])) as Record<Env, string> });
      } catch {
        return fallback(request);
      }
    }
    const chosenEnv = env ?? services.snapshots.cachedDefaultEnv(projectId);
    const entry = chosenEnv && services.snapshots.cached(projectId, chosenEnv);
    if (!entry) return fallback(request);
    return answer(h, entry, start);
  };
  const answer = (h: Headers, entry: SnapshotEntry, start: number): Response => {
    const sent = h.get("x-request-id");
    const requestId = sent !== null || log.sdkRequests ? requestIdFor(sent) : undefined;
    const response = featuresResponse(entry, h, requestId);
    const ms = performance.now() - start;
    const status = response.status;
    (status === 304 ? notModified : status === 200 ? ok : series.byStatusOf(status)).observe(ms / 1000);
    // The key is a path segment: never logged.
    if (log.sdkRequests) log.request({ method: "GET", path: "/api/features/…", status, durationMs: Math.round(ms * 1000) / 1000, requestId });
    return response;
  };
  return { [FEATURES_ROUTE]: { GET: handle } };
}
