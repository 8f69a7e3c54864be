import { Elysia, t } from "elysia";
import type { Principal } from "../../lib/auth";
import { tooManyRequests } from "../../lib/errors";
import { describe } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { EnvQuery } from "../delivery/contract";
import { DEFAULT_MAX_STREAMS_PER_KEY } from "../delivery/routes";
import { DEFAULT_HEARTBEAT_MS, snapshotStream } from "../delivery/stream";
import { GrowthbookPayloadSchema, KeyParam } from "./contract";
import { featuresResponse, growthbookEntry } from "./prepared";

const STREAM_RETRY_AFTER_S = 30;

/**
 * GrowthBook SDKs send their clientKey in the path, never in a header: it is checked as the SDK paths check
 * X-SDK-Key (same errors: UNAUTHORIZED for an unknown key, FORBIDDEN for another kind of key or origin).
 */
export function pathKeyPrincipal(ctx: AppContext, key: string, headers: Record<string, string | undefined>, kind: "server"): Promise<Principal> {
  return ctx.authenticator.sdk({ "x-sdk-key": key, origin: headers.origin }, kind);
}

export function growthbookRoutes(ctx: AppContext) {
  const { snapshots } = ctx.services;
  const heartbeatMs = ctx.options.streamHeartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const maxStreamsPerKey = ctx.options.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  /** Open `/sub` streams per key (counted apart from `/api/sdk/v1/stream`'s, with the same cap). */
  const openStreams = new Map<string, number>();

  return new Elysia({ name: "growthbook", seed: ctx })
    .get(
      "/api/features/:key",
      async ({ params, query, headers, request }) => {
        const principal = await pathKeyPrincipal(ctx, params.key, headers, "server");
        const env = query.env ?? (await snapshots.defaultEnv(principal.projectId));
        return featuresResponse(await snapshots.get(principal.projectId, env), request.headers);
      },
      {
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
            "Send a context's `user_id` (and `account_id`) as GrowthBook attributes. Constructs GrowthBook cannot evaluate as svc does are served as docs/sdk.md lists. " +
            "Strong `ETag` (the snapshot's tag with `-gb`): `If-None-Match` answers 304 without touching the database. `x-sse-support: enabled`: SDKs then follow `/sub/{key}`. " +
            "Auth: the key in the path (a wrong kind of key is FORBIDDEN, an unknown one UNAUTHORIZED).",
          response: { 200: GrowthbookPayloadSchema, 304: t.Void({ description: "Not modified" }) },
        }),
      },
    )
    .get(
      "/sub/:key",
      async ({ params, query, headers, request, server }) => {
        const principal = await pathKeyPrincipal(ctx, params.key, headers, "server");
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
    );
}
