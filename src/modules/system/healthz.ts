import { requestIdFor } from "../../lib/http-values";
import type { AppContext } from "../../lib/module";

const HEALTHZ_PATH = "/healthz";
const HEALTHY = JSON.stringify({ ok: true });

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * GET (and HEAD) /healthz from Bun's native table, with what the pipeline gives every answer: the same body and
 * content type, an X-Request-Id (the caller's, when safe, else a new one), the /metrics count under the route
 * `/healthz`, and the request line. Liveness probes call it every few seconds on every server, and it is the
 * first request of most starts: answered here, it pays none of the Elysia handler's composition on first use
 * (about 5 ms of a cold start's first answer on the compiled binary, issue 32) nor its per-request hooks.
 *
 * A request with a body (a length or a chunked encoding) goes to the Elysia route, `fallback`, which applies
 * the body limits as on every path. `answered` is told of each answer (startServer holds work back until the
 * first).
 */
export function healthzFastRoute(ctx: AppContext, fallback: Handler, answered: () => void): Record<string, Record<string, Handler>> {
  const { log } = ctx;
  const telemetry = ctx.services.operations.telemetry;
  const handle = (request: Request): Response | Promise<Response> => {
    const start = performance.now();
    const h = request.headers;
    if (h.has("content-length") || h.has("transfer-encoding")) return fallback(request);
    const requestId = requestIdFor(h.get("x-request-id"));
    const response = new Response(HEALTHY, { headers: { "content-type": "application/json;charset=utf-8", "x-request-id": requestId } });
    const ms = performance.now() - start;
    telemetry.request(request.method, HEALTHZ_PATH, 200, ms / 1000);
    answered();
    if (log.requests) log.request({ method: request.method, path: HEALTHZ_PATH, status: 200, durationMs: Math.round(ms * 1000) / 1000, requestId });
    return response;
  };
  return { [HEALTHZ_PATH]: { GET: handle } };
}
