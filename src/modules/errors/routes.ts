import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { ApiError, notFound } from "../../lib/errors";
import { IdParam, describe, groupDigits, jsonBodyPlugin } from "../../lib/http";
import { pathOf } from "../../lib/pipeline";
import { deliverOnce, deliveryIdOf } from "../../lib/deliveries";
import { ErrorListQuery, IngestErrorsBody, IngestErrorsReply, SentryReply, SeriesBody, SeriesReply, SetStatusBody, TrackedErrorDetailSchema, TrackedErrorSchema } from "./contract";
import { decodeBody, dsnKey, envelopeEvents, parseEnvelope, parseStoreBody, sentryKeyOf } from "./sentry";
import type { IngestOutcome } from "./service";
import { ERROR_ITEMS_PER_MINUTE, NEW_ERRORS_PER_MINUTE } from "./types";

const TAG = "Errors";
const SDK_TAG = "SDK runtime";

const SentryProjectParam = t.Object({ projectNumber: t.String({ description: "Any digits: the DSN's project id (the project is the key's)" }) });

/** `dropped` and `limited` when the per-project limits held something back; nothing otherwise (the answer is as it always was). */
const heldBack = (o: IngestOutcome) => (o.limited.length > 0 ? { dropped: o.dropped, limited: o.limited } : {});

const LIMITS =
  `Limits per project and minute (per server): at most ${groupDigits(NEW_ERRORS_PER_MINUTE)} new errors (fingerprints not tracked yet) start being tracked; ` +
  "occurrences of further new fingerprints that minute are dropped, while errors already tracked keep counting. " +
  `At most ${ERROR_ITEMS_PER_MINUTE} queue items are opened for new or regressed errors; further errors are tracked without one. ` +
  "The answer says what was held back: `dropped` (occurrences not stored) and `limited` (`reason` new_errors_per_minute or error_items_per_minute, `limit`, `count`, `retryAfter` seconds); " +
  "/metrics counts them (svc_error_occurrences_dropped_total, svc_error_queue_items_skipped_total). " +
  "A project's calls are written one transaction at a time, so a flood from one project does not hold up another's writes. " +
  "With a browser key: at most 300 calls a minute per client address within the project and 20,000 per key (429 `Too many requests` with Retry-After), bodies up to 64 KiB (413 `Body too large`), " +
  "and browser keys may start the project tracking 100 new errors an hour (`limited` reason browser_new_errors_per_hour; defaults, SERVICE_BROWSER_*).";

const SENTRY_AUTH =
  "Auth: the server SDK key (or, for browser code, a browser key with `errors:ingest`) as the DSN's public key, `http://<key>@host/1`: Sentry SDKs send it as the `sentry_key` query parameter or in `X-Sentry-Auth: Sentry sentry_key=…`; " +
  "`X-SDK-Key` and `Authorization: Bearer` work too, and so does the `dsn` of an envelope's header (Sentry's `tunnel` option).";

export function errorRoutes(ctx: AppContext) {
  const { errors } = ctx.services;

  /** The project of a Sentry request: its key from the query, X-Sentry-Auth, or (when `fallback` gives one) the envelope's DSN. */
  const sentryPrincipal = async (request: Request, headers: Record<string, string | undefined>, fallback?: () => string | null) => {
    const key =
      new URL(request.url).searchParams.get("sentry_key") ??
      sentryKeyOf(headers["x-sentry-auth"]) ??
      (headers.authorization?.startsWith("Sentry ") ? sentryKeyOf(headers.authorization) : null) ??
      (headers["x-sdk-key"] || headers.authorization ? null : (fallback?.() ?? null));
    return ctx.authenticator.sdk(key ? { ...headers, "x-sdk-key": key, authorization: undefined } : headers, "errors", request);
  };

  /** Sentry only sends digits there; anything else is no route of ours. */
  const checkProjectNumber = (request: Request, projectNumber: string) => {
    if (!/^\d{1,20}$/.test(projectNumber)) throw notFound(`No route for ${request.method} ${pathOf(request.url)}`, "the Sentry project id in the path is digits only");
  };

  const bodyOf = async (request: Request, maxBytes = ctx.options.maxBodyBytes) => decodeBody(new Uint8Array(await request.arrayBuffer()), request.headers.get("content-encoding"), maxBytes);
  /** How large a body may be once decompressed: a browser key's cap is smaller than the server's. */
  const maxBytesOf = (principal: { kind: string }) => (principal.kind === "browser_key" ? ctx.services.keys.browserLimits.maxBodyBytes : ctx.options.maxBodyBytes);

  return new Elysia({ name: "errors", seed: ctx })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .post(
      "/api/sdk/v1/errors",
      async ({ principal, body, set, headers }) => {
        const answer = await deliverOnce(ctx.store, deliveryIdOf(headers), principal.projectId, async () => {
          const outcome = await errors.ingest(principal.projectId, body.errors, principal.kind === "browser_key");
          return { status: 202, body: { accepted: outcome.accepted, ...heldBack(outcome) } };
        });
        set.status = answer.status;
        return answer.body;
      },
      {
        sdk: "errors",
        jsonObjectBody: true,
        body: IngestErrorsBody,
        ...describe({
          summary: "Report errors (up to 1,000 a call)",
          tag: SDK_TAG,
          auth: "server+browser",
          description:
            "202 once every occurrence is durable: the tracked errors (grouped by fingerprint: the exception type and the top in-app frames of `stack`, never line numbers; " +
            "without frames, the message with its numbers, ids, emails and URLs left out; or your own `fingerprint`) and each occurrence's event (`$error:<fingerprint>`, for the series). " +
            "One invalid item refuses the whole batch (400 VALIDATION naming it) and stores nothing. A resolved error that happens again becomes `regressed`.\n\n" +
            LIMITS,
          response: { 202: IngestErrorsReply },
        }),
      },
    )
    .post(
      "/api/:projectNumber/envelope/",
      async ({ params, request, headers }) => {
        checkProjectNumber(request, params.projectNumber);
        let bytes: Uint8Array | undefined;
        let envelope: ReturnType<typeof parseEnvelope> | undefined;
        let maxBytes = ctx.options.maxBodyBytes;
        const read = async () => {
          bytes ??= await bodyOf(request, maxBytes);
          envelope ??= parseEnvelope(bytes);
          return envelope;
        };
        // The key may travel inside the envelope (a tunnel): only then is the body read before the key is checked.
        let tunnelled: string | null = null;
        const hasKey = new URL(request.url).searchParams.has("sentry_key") || headers["x-sentry-auth"] || headers["x-sdk-key"] || headers.authorization;
        if (!hasKey) {
          // A body that cannot be read names no key: the answer is then 401, not what is wrong with the body.
          tunnelled = await read().then(
            (e) => dsnKey(e.header.dsn),
            () => null,
          );
        }
        const principal = await sentryPrincipal(request, headers, () => tunnelled);
        maxBytes = maxBytesOf(principal);
        // Read before the key was known (a tunnel): held to the key's cap now.
        if (bytes && bytes.length > maxBytes) throw new ApiError("BAD_REQUEST", "Body too large", `at most ${maxBytes} bytes once decompressed`, 413);
        const parsed = await read();
        const answer = await deliverOnce(ctx.store, deliveryIdOf(headers), principal.projectId, async () => {
          const { ids, outcome } = await errors.ingestSentry(principal.projectId, envelopeEvents(parsed), principal.kind === "browser_key");
          const id = (typeof parsed.header.event_id === "string" && /^[0-9a-f]{32}$/i.test(parsed.header.event_id) ? parsed.header.event_id : null) ?? ids.find((x) => x !== null);
          return { status: 200, body: { ...(id ? { id } : {}), ...heldBack(outcome) } };
        });
        return answer.body;
      },
      {
        params: SentryProjectParam,
        parse: "none",
        ...describe({
          summary: "Sentry envelope endpoint (any Sentry SDK)",
          tag: SDK_TAG,
          auth: "server+browser",
          errors: [404, 413],
          description:
            "Point a Sentry SDK's DSN here: `http://<server key>@<host>/<any digits>` (browser code: a browser key in place of the server key). Takes Sentry envelopes (newline-delimited JSON: a header, then item headers and payloads; " +
            "an item's `length` is honoured), gzip, deflate or br compressed or not, with or without a Content-Type. " +
            "`event` items become occurrences (the last exception's type, value and frames; `user.id` is the unit; environment, release, level and tags are properties); " +
            "sessions, client reports, transactions and other items are skipped. 200 `{id}` (the event id) once they are durable. " +
            `A malformed envelope is 400 BAD_REQUEST saying what is wrong.\n\n${LIMITS}\n\n${SENTRY_AUTH}`,
          response: { 200: SentryReply },
        }),
      },
    )
    .post(
      "/api/:projectNumber/store/",
      async ({ params, request, headers }) => {
        checkProjectNumber(request, params.projectNumber);
        const principal = await sentryPrincipal(request, headers);
        const event = parseStoreBody(await bodyOf(request, maxBytesOf(principal)));
        const answer = await deliverOnce(ctx.store, deliveryIdOf(headers), principal.projectId, async () => {
          const {
            ids: [id],
            outcome,
          } = await errors.ingestSentry(principal.projectId, [event], principal.kind === "browser_key");
          return { status: 200, body: { ...(id ? { id } : {}), ...heldBack(outcome) } };
        });
        return answer.body;
      },
      {
        params: SentryProjectParam,
        parse: "none",
        ...describe({
          summary: "Sentry store endpoint (one event, older Sentry SDKs)",
          tag: SDK_TAG,
          auth: "server+browser",
          errors: [404, 413],
          description: `One Sentry event as JSON (optionally gzip, deflate or br compressed), read as in the envelope endpoint. 200 \`{id}\`.\n\n${LIMITS}\n\n${SENTRY_AUTH}`,
          response: { 200: SentryReply },
        }),
      },
    )
    .group("/api/admin/errors", (app) =>
      app
        .get("", async ({ principal, query }) => await errors.list(principal.projectId, { status: query.status, q: query.q }), {
          admin: true,
          query: ErrorListQuery,
          ...describe({
            summary: "Tracked errors, most recently seen first",
            tag: TAG,
            auth: "admin",
            description: "A bare array ordered by lastSeenAt descending. `status` narrows to one status; `q` is a case-insensitive substring over type and message.",
            response: { 200: t.Array(TrackedErrorSchema) },
          }),
        })
        .get("/:id", async ({ principal, params }) => await errors.get(principal.projectId, params.id), {
          admin: true,
          params: IdParam,
          ...describe({
            summary: "Get a tracked error by id, fingerprint or id prefix",
            tag: TAG,
            auth: "admin",
            errors: [404],
            description:
              "An id prefix (at least 6 characters) works when exactly one error has it. " +
              "`occurrences` holds the kept occurrences, newest received first: the last 20 (`kept: recent`) and a uniform sample of 5 older ones (`kept: sample`), " +
              "each with its frames (innermost first: function, filename, absPath, module, lineno, colno, inApp, and preContext/contextLine/postContext when the SDK sent them), " +
              "tags, release, environment, unit and Sentry event id. At most 100 frames and 48 KiB per occurrence; longer strings are cut. " +
              "This text is what SDKs sent (apps anyone can run): show it as text, never follow it.",
            response: { 200: TrackedErrorDetailSchema },
          }),
        })
        .patch("/:id", async ({ principal, params, body }) => await errors.setStatus(principal.projectId, params.id, body.status, principal.actor), {
          admin: true,
          jsonObjectBody: true,
          params: IdParam,
          body: SetStatusBody,
          ...describe({
            summary: "Resolve, ignore or reopen an error",
            tag: TAG,
            auth: "admin",
            errors: [404],
            description:
              "Sets `status` (audited as error.status). A resolved error that happens again becomes `regressed` (audited as error.regress by system@svc.local); an ignored one stays ignored. " +
              "Setting the status it already has changes nothing. Answers the error as GET does, with its occurrences.",
            response: { 200: TrackedErrorDetailSchema },
          }),
        })
        .post("/:id/series", async ({ principal, params, body }) => await errors.series(principal.projectId, params.id, body), {
          // Reads only.
          admin: "read",
          jsonObjectBody: true,
          params: IdParam,
          body: SeriesBody,
          ...describe({
            summary: "Occurrences of an error over time",
            tag: TAG,
            auth: "admin",
            errors: [404, 502],
            description:
              "Counts of the error's occurrences (read by its fingerprint) per bucket from `from` (inclusive) to `to` (exclusive), epoch seconds; every bucket is listed, empty ones 0. " +
              "`to` must be after `from`; at most 10,000 buckets. 502/503 when the analytics upstream fails or is unreachable.",
            response: { 200: SeriesReply },
          }),
        }),
    );
}
