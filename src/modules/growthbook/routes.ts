import { Elysia, t } from "elysia";
import type { Principal } from "../../lib/auth";
import { tooManyRequests, validation } from "../../lib/errors";
import { describe } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { CONTEXT_BYTES_MAX, contextBytes } from "../../sdk/gates";
import { EnvQuery } from "../delivery/contract";
import { type Exposure, createExposureLogger } from "../delivery/ofrep";
import { DEFAULT_MAX_STREAMS_PER_KEY, checkBoundEnv } from "../delivery/routes";
import { DEFAULT_HEARTBEAT_MS, snapshotStream } from "../delivery/stream";
import { BrowserKeyParam, GrowthbookPayloadSchema, KeyParam, RemoteEvalBody, RemoteEvalSchema } from "./contract";
import { featuresResponse, growthbookEntry } from "./prepared";
import { remoteEvaluate } from "./remote-eval";

const STREAM_RETRY_AFTER_S = 30;

/**
 * GrowthBook SDKs send their clientKey in the path, never in a header: it is checked as the SDK paths check
 * X-SDK-Key (same errors: UNAUTHORIZED for an unknown key, FORBIDDEN for another kind of key or origin).
 */
export function pathKeyPrincipal(ctx: AppContext, key: string, headers: Record<string, string | undefined>, rule: "server" | "evaluate"): Promise<Principal> {
  return ctx.authenticator.sdk({ "x-sdk-key": key, origin: headers.origin }, rule);
}

export function growthbookRoutes(ctx: AppContext) {
  const { snapshots } = ctx.services;
  const heartbeatMs = ctx.options.streamHeartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const maxStreamsPerKey = ctx.options.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  /** Open `/sub` streams per key (counted apart from `/api/sdk/v1/stream`'s, with the same cap). */
  const openStreams = new Map<string, number>();
  /**
   * The key is checked in `transform`, before the query and body are validated (as the `sdk` macro does), so a
   * caller without a valid key learns nothing of the body's rules.
   */
  const principals = new WeakMap<Request, Principal>();
  const authenticate =
    (rule: "server" | "evaluate") =>
    async ({ params, headers, request }: { params: Record<string, string | undefined>; headers: Record<string, string | undefined>; request: Request }) => {
      principals.set(request, await pathKeyPrincipal(ctx, params.key ?? "", headers, rule));
    };
  // Units remote evaluation assigns to experiments: logged in the background, once per unit, as OFREP does.
  const logExposures = createExposureLogger({
    append: (rows) => ctx.services.analytics.append(rows),
    now: () => ctx.services.analytics.now(),
    log: ctx.log,
  });

  return new Elysia({ name: "growthbook", seed: ctx })
    .get(
      "/api/features/:key",
      async ({ query, request }) => {
        const principal = principals.get(request)!;
        const env = query.env ?? (await snapshots.defaultEnv(principal.projectId));
        return featuresResponse(await snapshots.get(principal.projectId, env), request.headers);
      },
      {
        transform: authenticate("server"),
        params: KeyParam,
        query: EnvQuery,
        ...describe({
          summary: "GrowthBook SDK payload",
          tag: "SDK runtime",
          auth: "none",
          errors: [400, 401, 403],
          description:
            "What GrowthBook's SDKs (JS, React, Node, Python, Go, Java, Kotlin, Swift, Ruby, PHP, C#, Elixir, Flutter) load with `apiHost` = this server and `clientKey` = a **server** key (in the path). " +
            "Every killswitch (a boolean feature; each sub-switch as `name/switchKey`), config (its value), gate (its rules as GrowthBook rules with `hashVersion: 2` and svc's salt as `seed`, so buckets are svc's) " +
            "and running experiment (an experiment rule: `key` the experiment's name, `name` its id, variation keys svc's variant keys, explicit `ranges`) of the env (`env` query, default the project's `defaultEnv`). " +
            "Send a context's `user_id` (and `account_id`) as GrowthBook attributes. A segment the rules name (in_segment / not_in_segment) becomes its conditions inlined and, for its id list, a saved group: `savedGroups: {<segment name>: [ids]}` read by `$inGroup` (GrowthBook SDKs with saved-group support: JS 1.1.0 and later). " +
            "Constructs GrowthBook cannot evaluate as svc does are served as docs/sdk.md lists. " +
            "Strong `ETag` (the snapshot's tag with `-gb`): `If-None-Match` answers 304 without touching the database. `x-sse-support: enabled`: SDKs then follow `/sub/{key}`. " +
            "Auth: the key in the path (a wrong kind of key is FORBIDDEN, an unknown one UNAUTHORIZED).",
          response: { 200: GrowthbookPayloadSchema, 304: t.Void({ description: "Not modified" }) },
        }),
      },
    )
    .get(
      "/sub/:key",
      async ({ query, request, server }) => {
        const principal = principals.get(request)!;
        const env = query.env ?? (await snapshots.defaultEnv(principal.projectId));
        const first = await snapshots.get(principal.projectId, env);
        const keyId = principal.credentialId;
        const open = openStreams.get(keyId) ?? 0;
        if (open >= maxStreamsPerKey) throw tooManyRequests(STREAM_RETRY_AFTER_S);
        openStreams.set(keyId, open + 1);
        // The heartbeat keeps the connection alive; Bun's idle timer must not cut a quiet stream.
        server?.timeout(request, 0);
        return snapshotStream(snapshots, {
          projectId: principal.projectId,
          env,
          first,
          lastEventId: request.headers.get("last-event-id"),
          heartbeatMs,
          signal: AbortSignal.any([request.signal, ctx.shutdown]),
          render: (entry) => growthbookEntry(entry).event,
          onClose: () => {
            const left = (openStreams.get(keyId) ?? 1) - 1;
            if (left <= 0) openStreams.delete(keyId);
            else openStreams.set(keyId, left);
          },
        });
      },
      {
        transform: authenticate("server"),
        params: KeyParam,
        query: EnvQuery,
        ...describe({
          summary: "GrowthBook SDK stream (Server-Sent Events)",
          tag: "SDK runtime",
          auth: "none",
          errors: [400, 401, 403, 429],
          description:
            "`text/event-stream` as GrowthBook's SDKs follow it: on connect the current payload as `event: features` with `data:` the body of `GET /api/features/{key}` " +
            "(skipped when `Last-Event-ID` already names it), then one such event per publish on the env, and a `: ping` comment every 15 s. " +
            `At most ${maxStreamsPerKey} open streams per key (429 \`Too many requests\` with Retry-After beyond). Auth: a server key in the path.`,
          response: { 200: t.String({ description: "text/event-stream" }) },
        }),
      },
    )
    .post(
      "/api/eval/:key",
      async ({ query, body, request }) => {
        const principal = principals.get(request)!;
        const env = query.env ?? principal.env ?? (await snapshots.defaultEnv(principal.projectId));
        checkBoundEnv(principal, env);
        const attributes = body.attributes ?? {};
        const bytes = contextBytes(attributes);
        if (bytes > CONTEXT_BYTES_MAX) throw validation("Attributes too large", `attributes: ${bytes} bytes of JSON; at most ${CONTEXT_BYTES_MAX} (64 KiB)`);
        ctx.services.attributes.noteContext(principal.projectId, attributes);
        const exposures: Exposure[] = [];
        const snapshot = (await snapshots.get(principal.projectId, env)).snapshot;
        const payload = remoteEvaluate(snapshot, body, exposures);
        logExposures(principal.projectId, exposures);
        // Every feature was evaluated: counted in memory (usage module), as OFREP's bulk call is.
        ctx.services.usage.recorder.countAll(principal.projectId, env, snapshot);
        return new Response(JSON.stringify(payload), { headers: { "content-type": "application/json", "cache-control": "no-store" } });
      },
      {
        transform: authenticate("evaluate"),
        params: BrowserKeyParam,
        query: EnvQuery,
        body: RemoteEvalBody,
        ...describe({
          summary: "GrowthBook remote evaluation",
          tag: "SDK runtime",
          auth: "none",
          errors: [400, 401, 403],
          description:
            "What GrowthBook's SDKs post with `remoteEval: true` (browsers, phones): `{attributes, forcedVariations, forcedFeatures, url}`. " +
            "Answers every feature of `GET /api/features/{key}` already evaluated for the attributes by svc's own evaluator (`{defaultValue}` each, no rules, salts or segments), " +
            "an experiment a unit is assigned to as a forced rule with `tracks` (so the SDK's trackingCallback fires); the exposure is logged by the server, once per unit, as OFREP does. " +
            "Auth: a **browser key** in the path (scope `flags:evaluate`; it evaluates its own env, another `env` is FORBIDDEN), or a server key (`env` query, default the project's `defaultEnv`). " +
            "Attributes over 64 KiB of JSON are VALIDATION.",
          response: { 200: RemoteEvalSchema },
        }),
      },
    );
}
