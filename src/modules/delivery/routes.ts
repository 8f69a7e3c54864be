import { Elysia, t } from "elysia";
import type { AppContext, Services } from "../../lib/module";
import type { Principal } from "../../lib/auth";
import type { Env } from "../../lib/envs";
import { forbidden, notFound, tooManyRequests } from "../../lib/errors";
import { describe, etagMatches } from "../../lib/http";
import { EnvQuery, OfrepBulkSchema, OfrepFailureSchema, OfrepRequestSchema, OfrepSuccessSchema, SdkKeyInfoSchema, SnapshotSchema } from "./contract";
import { type Exposure, answersPerContext, createExposureLogger, evaluateAll, evaluateFlag, isFailure, parseEvaluationRequest } from "./ofrep";
import { RELAY_HEADER } from "../relays/header";
import { bulkNotModified, bulkTag, snapshotResponse } from "./replies";
import type { SnapshotEntry } from "./snapshot";
import { DEFAULT_HEARTBEAT_MS, snapshotStream } from "./stream";

/** The header naming the key `GET /api/sdk/v1/key` describes instead of the caller's own. */
export const KEY_LOOKUP_HEADER = "x-sdk-key-lookup";

/** Open SSE streams one SDK key may hold (SERVICE_MAX_STREAMS_PER_KEY). */
export const DEFAULT_MAX_STREAMS_PER_KEY = 500;
const STREAM_RETRY_AFTER_S = 30;

function ofrepJson(status: number, body: unknown, etag?: string): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (etag) headers.etag = etag;
  return new Response(JSON.stringify(body), { status, headers });
}

/** The body as read by `parse: "text"` (empty when there is none). */
function bodyText(body: unknown): string {
  return typeof body === "string" ? body : "";
}

/** The flag key is the rest of the path, slashes included; clients may or may not percent-encode it. */
function flagKey(rest: string | undefined): string {
  try {
    return decodeURIComponent(rest ?? "");
  } catch {
    return rest ?? "";
  }
}

/** A browser key evaluates its own env only: another env's rules are not its to read, even evaluated. */
export function checkBoundEnv(principal: Principal, env: Env): void {
  if (principal.env && env !== principal.env) {
    throw forbidden(`This browser key evaluates ${principal.env} only`, `context.env: leave it out, or send ${principal.env}; mint a browser key for ${env} to read that env`);
  }
}

const OFREP_BODY_DOC = { content: { "application/json": { schema: OfrepRequestSchema } } };

export function deliveryRoutes(ctx: AppContext) {
  const { snapshots, keys } = ctx.services;
  const heartbeatMs = ctx.options.streamHeartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const maxStreamsPerKey = ctx.options.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  /** Open streams per SDK key: one leaked or looping client cannot hold every connection and its memory. */
  const openStreams = new Map<string, number>();
  // The bulk OFREP reply only changes with the snapshot: render it once per entry.
  const bulkBodies = new WeakMap<SnapshotEntry, string>();
  // Units OFREP assigns to experiments: logged as exposures in the background, never holding up a reply.
  const logExposures = createExposureLogger({
    append: (rows) => ctx.services.analytics.append(rows),
    now: () => ctx.services.analytics.now(),
    log: ctx.log,
  });
  const ofrepSingle = describe({
    summary: "OFREP: evaluate one flag",
    tag: "SDK runtime",
    auth: "server+browser",
    errors: [403, 404],
    description:
      "OpenFeature Remote Evaluation Protocol. The key is the rest of the path (`name/switchKey` unencoded for a sub-switch). " +
      "A killswitch is a boolean flag (variant on/off); `name/switchKey` is that sub-switch when the entry exists, else the killswitch's flat value; " +
      "a config is an object flag with its published value; a gate is a boolean flag evaluated for the context (TARGETING_MATCH, SPLIT or DEFAULT); " +
      "a running experiment's name answers the unit's variant (value the variant's value, `variant` its key, reason SPLIT, metadata `{}`; a unit not in it: the control's, reason DEFAULT), " +
      "the unit id being the context's `user_id` (or `targetingKey`) or `account_id`, as the experiment's universe says; an assigned unit's exposure is logged once. " +
      "A gate or config a running experiment's variant overrides answers the override (reason SPLIT) for that variant's units. " +
      "One name in several kinds: killswitch, then gate, then config, then experiment. " +
      "The env is `context.env`, else the project's `defaultEnv`. Killswitches and configs answer reason STATIC; metadata `{version}` but for experiments. " +
      "400 is `{key, errorCode: PARSE_ERROR | INVALID_CONTEXT}` (INVALID_CONTEXT also for a context over 64 KiB of JSON), 404 `{key, errorCode: FLAG_NOT_FOUND}`. " +
      "A text attribute over 4,096 characters matches no gate operator.",
    response: { 200: OfrepSuccessSchema, 400: OfrepFailureSchema, 404: OfrepFailureSchema },
  });
  const ofrepBulk = describe({
    summary: "OFREP: evaluate every flag",
    tag: "SDK runtime",
    auth: "server+browser",
    description:
      "Every killswitch, each sub-switch as `name/switchKey`, every gate, every config and every running experiment, evaluated as in the single call " +
      "(the exposures of the experiments that assign the unit are logged, once per unit). " +
      "Carries an `ETag`; `If-None-Match` with it answers 304 until the next publish on that env. A context over 64 KiB of JSON is 400 INVALID_CONTEXT.",
    response: { 200: OfrepBulkSchema, 304: t.Void({ description: "Not modified" }), 400: OfrepFailureSchema },
  });

  return new Elysia({ name: "delivery", seed: ctx })
    .use(ctx.auth)
    .get(
      "/api/sdk/v1/snapshot",
      async ({ principal, query, request }) => {
        const env = query.env ?? (await snapshots.defaultEnv(principal.projectId));
        return snapshotResponse(await snapshots.get(principal.projectId, env), request.headers);
      },
      {
        sdk: "server",
        query: EnvQuery,
        ...describe({
          summary: "Everything published on one env",
          tag: "SDK runtime",
          auth: "server",
          description:
            "Prepared once per revision. Strong `ETag` `\"<epoch>-<projectId>-<env>-<revision>\"` (the epoch changes when the database is restored or copied, so an old tag never matches other content): `If-None-Match` with it answers 304 without touching the database. " +
            "`Accept-Encoding: gzip` gets gzip bytes. `Cache-Control: no-cache`. At most 5 MiB of JSON: a publish that would make it larger is refused (VALIDATION).",
          response: { 200: SnapshotSchema, 304: t.Void({ description: "Not modified" }) },
        }),
      },
    )
    .get(
      "/api/sdk/v1/stream",
      async ({ principal, query, request, server }) => {
        const env = query.env ?? (await snapshots.defaultEnv(principal.projectId));
        const first = await snapshots.get(principal.projectId, env);
        const keyId = principal.credentialId;
        const open = openStreams.get(keyId) ?? 0;
        if (open >= maxStreamsPerKey) throw tooManyRequests(STREAM_RETRY_AFTER_S);
        openStreams.set(keyId, open + 1);
        // An edge relay's stream (X-Svc-Relay): listed as connected while it is open. No relays service on a relay itself.
        const relayHeader = principal.kind === "server_key" ? request.headers.get(RELAY_HEADER) : null;
        const relayClosed = relayHeader ? (ctx.services as Partial<Services>).relays?.streamOpened(principal.projectId, relayHeader, ctx.network.clientAddress(request), env) : undefined;
        // The heartbeat keeps the connection alive; Bun's idle timer must not cut a quiet stream.
        server?.timeout(request, 0);
        return snapshotStream(snapshots, {
          projectId: principal.projectId,
          env,
          first,
          lastEventId: request.headers.get("last-event-id"),
          heartbeatMs,
          signal: AbortSignal.any([request.signal, ctx.shutdown]),
          onClose: () => {
            const left = (openStreams.get(keyId) ?? 1) - 1;
            if (left <= 0) openStreams.delete(keyId);
            else openStreams.set(keyId, left);
            relayClosed?.();
          },
        });
      },
      {
        sdk: "server",
        query: EnvQuery,
        ...describe({
          summary: "Server-Sent Events: one snapshot event per new revision",
          errors: [429],
          tag: "SDK runtime",
          auth: "server",
          description:
            "`text/event-stream`. On connect, the current snapshot as `id: <epoch>-<revision>`, `event: snapshot`, `data: <snapshot JSON>` " +
            "(skipped when `Last-Event-ID` already names the current epoch and revision); then one such event per publish on the env; " +
            "a `: ping` comment every 15 s. A client that stops reading gets only the newest snapshot when it reads again, and is disconnected after 60 s without reading. " +
            `At most ${maxStreamsPerKey} open streams per key (429 \`Too many requests\` with Retry-After beyond).`,
          response: { 200: t.String({ description: "text/event-stream" }) },
        }),
      },
    )
    .get(
      "/api/sdk/v1/key",
      async ({ principal, headers }) => {
        // The server key describes itself, or another key of its project named in X-SDK-Key-Lookup (an edge
        // relay asks once per key it meets). Nothing secret is answered.
        const lookup = headers[KEY_LOOKUP_HEADER]?.trim();
        const key = lookup ? (lookup.startsWith("sdk_") ? (keys.cached(lookup) ?? (await keys.resolve(lookup))) : null) : (keys.cached(headers["x-sdk-key"]?.trim() || "") ?? null);
        if (lookup && (!key || key.projectId !== principal.projectId || key.type === "admin")) {
          throw notFound("No such SDK key in this project", `${KEY_LOOKUP_HEADER}: a server, client or browser key of the project, never revoked`);
        }
        const info = key ?? { id: principal.credentialId, projectId: principal.projectId, type: "server" as const, scopes: principal.scopes, allowedOrigin: principal.allowedOrigin };
        const env = (info as { env?: string }).env;
        const allowedOrigins = (info as { allowedOrigins?: readonly string[] | null }).allowedOrigins;
        return {
          id: info.id,
          projectId: info.projectId,
          type: info.type,
          scopes: info.scopes,
          allowedOrigin: info.allowedOrigin,
          // The relay applies the same origin rule as this server: the domain's origin and the project's allowed origins.
          ...(allowedOrigins !== undefined ? { allowedOrigins: allowedOrigins === null ? null : [...allowedOrigins] } : {}),
          ...(env ? { env } : {}),
          defaultEnv: await snapshots.defaultEnv(info.projectId),
        };
      },
      {
        sdk: "server",
        ...describe({
          summary: "Describe an SDK key of the project",
          tag: "SDK runtime",
          auth: "server",
          errors: [404],
          description:
            "The server key sent in X-SDK-Key, or the key named in `X-SDK-Key-Lookup` (a server, client or browser key of the same project): " +
            "its id, project, type, scopes, allowed origin, bound env (browser keys) and the project's `defaultEnv`, nothing secret. " +
            "A looked-up key that is unknown, revoked, of another project or an admin key is 404. " +
            "An edge relay (`svc serve --relay`) asks this once per key it meets and trusts the answer for about a minute.",
          response: { 200: SdkKeyInfoSchema },
        }),
      },
    )
    .post(
      "/ofrep/v1/evaluate/flags/*",
      async ({ principal, params, body }) => {
        const key = flagKey(params["*"]);
        const fallbackEnv = principal.env ?? (await snapshots.defaultEnv(principal.projectId));
        const request = parseEvaluationRequest(bodyText(body), () => fallbackEnv);
        if (isFailure(request)) return ofrepJson(400, { key, ...request });
        checkBoundEnv(principal, request.env);
        ctx.services.attributes.noteContext(principal.projectId, request.context, principal.kind === "browser_key");
        const exposures: Exposure[] = [];
        const snapshot = (await snapshots.get(principal.projectId, request.env)).snapshot;
        const flag = evaluateFlag(snapshot, key, request.context, exposures);
        if (!flag) return ofrepJson(404, { key, errorCode: "FLAG_NOT_FOUND", errorDetails: `No killswitch, gate, config or running experiment named ${key} on ${request.env}` });
        logExposures(principal.projectId, exposures);
        // In memory only (usage module): written every few seconds as one row per flag, env and day.
        ctx.services.usage.recorder.countKey(principal.projectId, request.env, snapshot, key);
        return ofrepJson(200, flag);
      },
      { sdk: "evaluate", parse: "text", ...ofrepSingle, detail: { ...ofrepSingle.detail, requestBody: OFREP_BODY_DOC } },
    )
    .post(
      "/ofrep/v1/evaluate/flags",
      async ({ principal, body, request }) => {
        const fallbackEnv = principal.env ?? (await snapshots.defaultEnv(principal.projectId));
        const text = bodyText(body);
        const parsed = parseEvaluationRequest(text, () => fallbackEnv);
        if (isFailure(parsed)) return ofrepJson(400, parsed);
        checkBoundEnv(principal, parsed.env);
        ctx.services.attributes.noteContext(principal.projectId, parsed.context, principal.kind === "browser_key");
        const entry = await snapshots.get(principal.projectId, parsed.env);
        const perContext = answersPerContext(entry.snapshot);
        const etag = bulkTag(entry, perContext, text);
        if (etagMatches(request.headers.get("if-none-match"), etag)) return bulkNotModified(etag);
        // A 200 evaluates every flag (a 304 evaluates nothing: the client keeps its answers).
        ctx.services.usage.recorder.countAll(principal.projectId, parsed.env, entry.snapshot);
        let json = perContext ? undefined : bulkBodies.get(entry);
        if (json === undefined) {
          const exposures: Exposure[] = [];
          json = JSON.stringify({ flags: evaluateAll(entry.snapshot, parsed.context, exposures) });
          if (!perContext) bulkBodies.set(entry, json);
          logExposures(principal.projectId, exposures);
        }
        return new Response(json, { headers: { "content-type": "application/json", etag, "cache-control": "no-cache" } });
      },
      { sdk: "evaluate", parse: "text", ...ofrepBulk, detail: { ...ofrepBulk.detail, requestBody: OFREP_BODY_DOC } },
    );
}
