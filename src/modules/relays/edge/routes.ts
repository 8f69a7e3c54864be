import { Elysia, t } from "elysia";
import type { SdkRule } from "../../../lib/auth";
import { deliveryIdOf } from "../../../lib/deliveries";
import { notFound } from "../../../lib/errors";
import { describe, jsonBodyPlugin } from "../../../lib/http";
import type { AppContext } from "../../../lib/module";
import { pathOf } from "../../../lib/pipeline";
import { IngestBody, IngestReply } from "../../analytics/contract";
import { EvaluationsBody, EvaluationsReply } from "../../usage/contract";
import { IngestErrorsBody, IngestErrorsReply, SentryReply } from "../../errors/contract";
import { dsnKey, sentryKeyOf } from "../../errors/sentry";
import { authorizeScrape } from "../../operations/routes";
import { METRICS_CONTENT_TYPE } from "../../operations/service";
import type { Relay } from "./service";

/** Request headers a forwarded request keeps (the credentials, the body's encoding, the browser's origin). */
const FORWARDED_HEADERS = ["x-sdk-key", "authorization", "x-sentry-auth", "content-type", "content-encoding", "origin", "user-agent"];

const RELAY_TAG = "Edge relay";

const SentryProjectParam = t.Object({ projectNumber: t.String() });

/**
 * The relay's own routes: what it forwards (events, errors, Sentry envelopes, the public intake: queued on
 * disk, then answered), /healthz with the relay's state, and /metrics. The SDK read paths are the delivery
 * module's routes, mounted unchanged over the relay's snapshots (relay.ts).
 */
export function relayRoutes(ctx: AppContext, relay: Relay) {

  /** A forwarded request's key passes the upstream's own rule for its path (`SdkRule`), over the keys the upstream describes. */
  const checkKey = (headers: Record<string, string | undefined>, rule: SdkRule, secret?: string | null) =>
    ctx.authenticator.sdk(secret ? { ...headers, "x-sdk-key": secret, authorization: undefined } : headers, rule);

  /** Queues the request for the upstream, durably, keeping a chained relay's delivery id. */
  const queue = (request: Request, headers: Record<string, string | undefined>, body: Uint8Array, overrides: Record<string, string> = {}) => {
    const forwarded: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = headers[name];
      if (value !== undefined) forwarded[name] = value;
    }
    forwarded["x-forwarded-for"] = ctx.network.clientAddress(request);
    const url = new URL(request.url);
    const id = deliveryIdOf(headers) ?? crypto.randomUUID();
    relay.forwarder.enqueue(id, url.pathname + url.search, { ...forwarded, ...overrides }, body);
    return id;
  };
  const encoder = new TextEncoder();
  /** An ingest batch the schema took: the key checked for its rule, then queued as JSON; the caller says 202. */
  const forwardBatch = async (request: Request, headers: Record<string, string | undefined>, rule: SdkRule, body: unknown) => {
    await checkKey(headers, rule);
    queue(request, headers, encoder.encode(JSON.stringify(body)), { "content-type": "application/json" });
  };
  const bytesOf = async (request: Request) => new Uint8Array(await request.arrayBuffer());

  /** The body's first line as a JSON object: an envelope's header (or a stored event), read once per request. */
  const firstLineObject = (body: Uint8Array): Record<string, unknown> | undefined => {
    try {
      const parsed: unknown = JSON.parse(new TextDecoder().decode(body.subarray(0, Math.min(body.length, 4096))).split("\n", 1)[0]!);
      return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  /** Sentry paths: the key from the query or X-Sentry-Auth; else X-SDK-Key or Bearer as sent (null); else the envelope header's DSN (a tunnel). */
  const sentryKey = (request: Request, headers: Record<string, string | undefined>, header: Record<string, unknown> | undefined): string | null => {
    const found =
      new URL(request.url).searchParams.get("sentry_key") ??
      sentryKeyOf(headers["x-sentry-auth"]) ??
      (headers.authorization?.startsWith("Sentry ") ? sentryKeyOf(headers.authorization) : null);
    if (found) return found;
    // X-SDK-Key or a bearer key: checked as sent.
    if (headers["x-sdk-key"] || headers.authorization) return null;
    return header ? dsnKey(header.dsn) : null;
  };
  /** The event id Sentry SDKs expect back: the envelope header's (or the stored event's) `event_id` when it is one. */
  const sentryEventId = (header: Record<string, unknown> | undefined): string | undefined => {
    const id = header?.event_id;
    return typeof id === "string" && /^[0-9a-f]{32}$/i.test(id) ? id : undefined;
  };
  const checkProjectNumber = (request: Request, projectNumber: string) => {
    if (!/^\d{1,20}$/.test(projectNumber)) throw notFound(`No route for ${request.method} ${pathOf(request.url)}`, "the Sentry project id in the path is digits only");
  };
  const QUEUED =
    "On an edge relay: checked (key, body schema), queued on the relay's disk, answered once durable there, then forwarded to the upstream in order " +
    "with `X-Svc-Delivery-Id`, retried while the upstream is away, stored there once.";

  return new Elysia({ name: "relay", seed: ctx })
    .use(jsonBodyPlugin)
    .get(
      "/healthz",
      ({ set }) => {
        const state = relay.state();
        if (!state.serving) set.status = 503;
        return { ok: state.serving, status: state.serving ? ("ok" as const) : ("starting" as const), relay: state.relay };
      },
      {
        ...describe({
          summary: "Liveness probe with the relay's state",
          tag: RELAY_TAG,
          auth: "none",
          description:
            "200 `{ok: true, status: \"ok\", relay: {upstream, connected, stale, staleSeconds?, queued, projectId, revisions}}` while the relay has snapshots to serve " +
            "(live or from disk); 503 `status: \"starting\"` before it has any.",
          response: { 200: t.Object({ ok: t.Boolean(), status: t.String(), relay: t.Unknown() }), 503: t.Object({ ok: t.Boolean(), status: t.String(), relay: t.Unknown() }) },
        }),
      },
    )
    .get(
      "/metrics",
      async ({ request }) => {
        authorizeScrape(ctx, request);
        return new Response(await relay.scrape(), { headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" } });
      },
      { ...describe({ summary: "Prometheus metrics of the relay", tag: RELAY_TAG, auth: "none", errors: [401, 403], response: { 200: t.String() } }) },
    )
    .post(
      "/api/sdk/v1/events",
      async ({ request, headers, body, set }) => {
        await forwardBatch(request, headers, "events", body);
        set.status = 202;
        return { accepted: body.events.length };
      },
      { jsonObjectBody: true, body: IngestBody, ...describe({ summary: "Send analytics events (forwarded)", tag: RELAY_TAG, auth: "server", description: QUEUED, response: { 202: IngestReply } }) },
    )
    .post(
      "/api/sdk/v1/evaluations",
      async ({ request, headers, body, set }) => {
        await forwardBatch(request, headers, "events", body);
        set.status = 202;
        // The upstream decides which names it has; the relay takes the batch as a whole.
        return { accepted: Object.keys(body.counts).length, ignored: 0 };
      },
      { jsonObjectBody: true, body: EvaluationsBody, ...describe({ summary: "Send evaluation counts (forwarded)", tag: RELAY_TAG, auth: "server", description: QUEUED, response: { 202: EvaluationsReply } }) },
    )
    .post(
      "/api/sdk/v1/errors",
      async ({ request, headers, body, set }) => {
        await forwardBatch(request, headers, "errors", body);
        set.status = 202;
        return { accepted: body.errors.length };
      },
      { jsonObjectBody: true, body: IngestErrorsBody, ...describe({ summary: "Report errors (forwarded)", tag: RELAY_TAG, auth: "server", description: QUEUED, response: { 202: IngestErrorsReply } }) },
    )
    .post(
      "/api/:projectNumber/envelope/",
      ({ request, headers, params }) => sentry(request, headers, params.projectNumber),
      { params: SentryProjectParam, parse: "none", ...describe({ summary: "Sentry envelope endpoint (forwarded)", tag: RELAY_TAG, auth: "server", description: QUEUED, response: { 200: SentryReply } }) },
    )
    .post(
      "/api/:projectNumber/store/",
      ({ request, headers, params }) => sentry(request, headers, params.projectNumber),
      { params: SentryProjectParam, parse: "none", ...describe({ summary: "Sentry store endpoint (forwarded)", tag: RELAY_TAG, auth: "server", description: QUEUED, response: { 200: SentryReply } }) },
    )
    .post("/ops/bug", ({ request, headers, set }) => intake(request, headers, set), { parse: "none", ...intakeDoc("Public intake: report a bug (forwarded)") })
    .post("/ops/feature-request", ({ request, headers, set }) => intake(request, headers, set), { parse: "none", ...intakeDoc("Public intake: request a feature (forwarded)") });

  /** A Sentry envelope or store body: queued as sent, once its key (wherever Sentry put it) passes. */
  async function sentry(request: Request, headers: Record<string, string | undefined>, projectNumber: string) {
    checkProjectNumber(request, projectNumber);
    const body = await bytesOf(request);
    const header = firstLineObject(body);
    await checkKey(headers, "errors", sentryKey(request, headers, header));
    queue(request, headers, body);
    const id = sentryEventId(header);
    return id ? { id } : {};
  }
  async function intake(request: Request, headers: Record<string, string | undefined>, set: { status?: number | string }) {
    await checkKey(headers, "client");
    const id = queue(request, headers, await bytesOf(request));
    set.status = 202;
    return { queued: true as const, deliveryId: id };
  }
  function intakeDoc(summary: string) {
    return describe({
      summary,
      tag: RELAY_TAG,
      auth: "client",
      description:
        `${QUEUED} The relay answers 202 \`{queued: true, deliveryId}\` (the item's number comes from the upstream, which files it in pending_approval as usual); ` +
        "the upstream's own checks (scope, public ticket creation, origin, body) apply when it arrives, and a refused item is dropped and logged by the relay.",
      response: { 202: t.Object({ queued: t.Literal(true), deliveryId: t.String() }) },
    });
  }
}
