import type { AppContext } from "../../app";
import { randomBase62 } from "../../lib/ids";
import { ENVS, type Env } from "../projects/service";
import { snapshotResponse } from "./routes";
import { etagMatches } from "./snapshot";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const SNAPSHOT_PATH = "/api/sdk/v1/snapshot";

type Fallback = (request: Request) => Response | Promise<Response>;

function envParam(url: string): Env | undefined | null {
  const q = url.indexOf("?");
  if (q === -1) return undefined;
  const values = new URLSearchParams(url.slice(q + 1)).getAll("env");
  if (values.length === 0) return undefined;
  return values.length === 1 && (ENVS as readonly string[]).includes(values[0]!) ? (values[0] as Env) : null;
}

/**
 * SDKs poll the snapshot with If-None-Match far more often than anything
 * changes, and Elysia's per-request pipeline costs about half the throughput
 * of a bare Bun server on that path. So Bun's native router answers exactly
 * that case, a server-to-server conditional GET whose tag is current, with the
 * same auth (server key, origin rule, last-used mark) and the same headers.
 * Every other request on the path (no or stale tag, browser Origin, anything
 * odd, any auth failure) goes to the Elysia route, which stays the documented
 * implementation and renders errors.
 */
export function snapshotFastRoutes(ctx: AppContext, fallback: Fallback) {
  const { authenticator, services, log } = ctx;
  const handle = (request: Request): Response | Promise<Response> => {
    const start = performance.now();
    const h = request.headers;
    const ifNoneMatch = h.get("if-none-match");
    if (!ifNoneMatch || h.has("origin") || h.has("content-length")) return fallback(request);
    const env = envParam(request.url);
    if (env === null) return fallback(request);
    let projectId: string;
    try {
      projectId = authenticator.sdk(
        {
          "x-sdk-key": h.get("x-sdk-key") ?? undefined,
          authorization: h.get("authorization") ?? undefined,
          "x-project-id": h.get("x-project-id") ?? undefined,
        },
        "server",
      ).projectId;
    } catch {
      return fallback(request);
    }
    const entry = services.snapshots.get(projectId, env ?? services.snapshots.defaultEnv(projectId));
    if (!etagMatches(ifNoneMatch, entry.etag)) return fallback(request);
    const incoming = h.get("x-request-id");
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomBase62(16);
    const response = snapshotResponse(entry, ifNoneMatch, null);
    response.headers.set("x-request-id", requestId);
    log.request({ method: "GET", path: SNAPSHOT_PATH, status: 304, durationMs: Math.round((performance.now() - start) * 1000) / 1000, requestId });
    return response;
  };
  return { [SNAPSHOT_PATH]: { GET: handle } };
}
