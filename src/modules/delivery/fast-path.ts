import { ENVS, type Env } from "../../lib/envs";
import { requestIdFor } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { snapshotResponse } from "./routes";

const SNAPSHOT_PATH = "/api/sdk/v1/snapshot";

type Fallback = (request: Request) => Response | Promise<Response>;

function envParam(url: string): Env | undefined | null {
  const q = url.indexOf("?");
  if (q === -1) return undefined;
  // SDKs send exactly `?env=<env>`: answer that without parsing the query.
  const direct = url.slice(q + 5);
  if (url.startsWith("env=", q + 1) && (ENVS as readonly string[]).includes(direct)) return direct as Env;
  const values = new URLSearchParams(url.slice(q + 1)).getAll("env");
  if (values.length === 0) return undefined;
  return values.length === 1 && (ENVS as readonly string[]).includes(values[0]!) ? (values[0] as Env) : null;
}

/**
 * SDKs poll the snapshot far more often than anything else is called, and
 * Elysia's per-request pipeline costs about half the throughput of a bare Bun
 * server there (and most of the garbage that grows the heap under load). So
 * Bun's native router answers the server-to-server snapshot GET itself, the
 * prepared bytes or a 304, with the same auth (server key, origin rule,
 * last-used mark) and the same headers. Every other request on the path
 * (browser Origin, a bad env, anything odd, any auth failure) goes to the
 * Elysia route, which stays the documented implementation and renders errors.
 */
export function snapshotFastRoutes(ctx: AppContext, fallback: Fallback) {
  const { authenticator, services, log } = ctx;
  const handle = (request: Request): Response | Promise<Response> => {
    const start = performance.now();
    const h = request.headers;
    if (h.has("origin") || h.has("content-length")) return fallback(request);
    const env = envParam(request.url);
    if (env === null) return fallback(request);
    let projectId: string;
    try {
      // From memory only: a key, default env or snapshot not in memory yet goes the awaited way.
      const principal = authenticator.sdkFromMemory(
        {
          "x-sdk-key": h.get("x-sdk-key") ?? undefined,
          authorization: h.get("authorization") ?? undefined,
          "x-project-id": h.get("x-project-id") ?? undefined,
        },
        "server",
      );
      if (!principal) return fallback(request);
      projectId = principal.projectId;
    } catch {
      return fallback(request);
    }
    const chosenEnv = env ?? services.snapshots.cachedDefaultEnv(projectId);
    const entry = chosenEnv && services.snapshots.cached(projectId, chosenEnv);
    if (!entry) return fallback(request);
    const requestId = requestIdFor(h.get("x-request-id"));
    const response = snapshotResponse(entry, h.get("if-none-match"), h.get("accept-encoding"), requestId);
    if (log.requests) {
      log.request({ method: "GET", path: SNAPSHOT_PATH, status: response.status, durationMs: Math.round((performance.now() - start) * 1000) / 1000, requestId });
    }
    return response;
  };
  return { [SNAPSHOT_PATH]: { GET: handle } };
}
