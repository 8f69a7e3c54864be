import { Elysia } from "elysia";
import type { AppContext } from "../../lib/module";
import { describe, jsonBodyPlugin } from "../../lib/http";
import { deliverOnce, deliveryIdOf } from "../../lib/deliveries";
import { IngestBody, IngestReply } from "./contract";

export function analyticsRoutes(ctx: AppContext) {
  const { analytics } = ctx.services;
  return new Elysia({ name: "analytics", seed: ctx })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .post(
      "/api/sdk/v1/events",
      async ({ principal, body, set, headers }) => {
        // A batch an edge relay forwards again (same X-Svc-Delivery-Id) is stored once.
        const answer = await deliverOnce(ctx.store, deliveryIdOf(headers), principal.projectId, async () => ({
          status: 202,
          body: { accepted: await analytics.ingest(principal.projectId, body.events, body.contexts as Record<string, unknown>[] | undefined, principal.kind === "browser_key") },
        }));
        set.status = answer.status;
        return answer.body;
      },
      {
        sdk: "events",
        jsonObjectBody: true,
        body: IngestBody,
        ...describe({
          summary: "Send analytics events (up to 1,000 a call)",
          tag: "SDK runtime",
          auth: "server+browser",
          description:
            "202 once every event of the batch is durable (concurrent calls are committed together); one invalid event refuses the whole batch (400 VALIDATION naming it) and stores nothing. " +
            "Series see the events within seconds. Unknown names become pending catalog rows; property names become auto-inferred attributes. " +
            "Names are 1 to 128 letters, digits, _ . : or -, never starting with `$`, except experiment exposures: `$exposure:<experiment id>` with `unitId` and `properties: {variant}` (the SDK's getVariant sends them, once per unit and experiment), and guarded rollouts' `$exposure:<rollout id>_<stage>` with `properties: {variant}` (new or old); they feed the experiment's analysis and never become catalog rows.\n\n" +
            "With a browser key (an app anyone can run): at most 300 calls a minute per client address within the project and 20,000 per key (429 `Too many requests` with Retry-After), bodies up to 64 KiB (413 `Body too large`); " +
            "a new name becomes a pending catalog row only while the project has fewer than 100 pending rows created in the last 24 hours (past that the events are stored, uncatalogued), and its contexts and properties report at most 100 attribute names a day (defaults; SERVICE_BROWSER_*).",
          response: { 202: IngestReply },
        }),
      },
    );
}
