import { nodeCrypto } from "../../lib/node-crypto";
import { Elysia, t } from "elysia";
import { forbidden, unauthorized } from "../../lib/errors";
import { describe } from "../../lib/http";
import { isMetricsScrape } from "../../lib/metrics";
import type { AppContext } from "../../lib/module";
import { dashboardPage } from "../dashboard/routes";
import { METRICS_CONTENT_TYPE } from "./service";

/** Headers a reverse proxy adds: a request carrying one came through a proxy, whatever its own address. */
const FORWARDING_HEADERS = ["x-forwarded-for", "forwarded", "x-real-ip"];

export function isLoopbackAddress(address: string): boolean {
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

function sameSecret(given: string, expected: string): boolean {
  // Digests are of equal length whatever was sent, as timingSafeEqual needs.
  const digest = (s: string) => nodeCrypto().createHash("sha256").update(s).digest();
  return nodeCrypto().timingSafeEqual(digest(given), digest(expected));
}

/**
 * Who may scrape: with SERVICE_METRICS_TOKEN, whoever sends it as a bearer
 * token; without, only a peer on this machine that is not a proxy relaying
 * someone else (a proxy on the same host would otherwise open /metrics to
 * every client of the proxy).
 */
export function authorizeScrape(ctx: Pick<AppContext, "options" | "network">, request: Request): void {
  const token = ctx.options.metricsToken;
  if (token) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
    if (!match || !sameSecret(match[1]!, token)) {
      throw unauthorized("Missing or invalid metrics token", "Authorization: send Bearer <the value of SERVICE_METRICS_TOKEN>");
    }
    return;
  }
  const peer = ctx.network.peerAddress(request);
  if (!isLoopbackAddress(peer) || FORWARDING_HEADERS.some((h) => request.headers.has(h))) {
    throw forbidden(
      "/metrics answers loopback peers only",
      "set SERVICE_METRICS_TOKEN on the server and send it as Authorization: Bearer <token> to scrape from another host or through a proxy",
    );
  }
}

export function operationsRoutes(ctx: AppContext) {
  const operations = ctx.services.operations;
  // /metrics is also the dashboard's Metrics section: a browser gets that page (and its sign-in), never the exposition.
  const dashboard = dashboardPage(ctx);
  return new Elysia({ name: "operations", seed: ctx }).get(
    "/metrics",
    async ({ request }) => {
      if (!ctx.options.edgeOnly && !isMetricsScrape("/metrics", request)) return dashboard({ request });
      authorizeScrape(ctx, request);
      return new Response(await operations.scrape(), { headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" } });
    },
    {
      ...describe({
        summary: "Prometheus metrics",
        tag: "System",
        auth: "none",
        errors: [401, 403],
        description:
          "The Prometheus text format (version 0.0.4): requests and latency by method, route template and status (`svc_http_requests_total`, " +
          "`svc_http_request_duration_seconds`), SDK polls by endpoint and result (`svc_sdk_polls_total`), open SSE streams, publish-to-stream delay, " +
          "events accepted and queued, outbox and connector backlogs, store and WAL sizes, and the process's CPU, memory and event-loop lag. " +
          "With `SERVICE_METRICS_TOKEN` set it takes `Authorization: Bearer <token>` (401 without); unset, it answers only peers on the loopback " +
          "address that are not relaying for someone else (403 otherwise, or with `X-Forwarded-For`, `Forwarded` or `X-Real-IP`). " +
          "A request whose `Accept` names `text/html` (a browser) gets the dashboard's Metrics page instead.",
        response: { 200: t.String({ description: "text/plain; version=0.0.4" }) },
      }),
    },
  );
}
