import { Elysia } from "elysia";
import { deliverOnce, deliveryIdOf } from "../../lib/deliveries";
import { describe, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { checkBoundEnv } from "../delivery/routes";
import { EvaluationsBody, EvaluationsReply, FlagNameParam, FlagUsageSchema, StaleListSchema, StaleQuery, UsageQuery } from "./contract";

const TAG = "Flag usage";

export function usageRoutes(ctx: AppContext) {
  const { usage, snapshots } = ctx.services;
  return new Elysia({ name: "usage", seed: ctx })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .post(
      "/api/sdk/v1/evaluations",
      async ({ principal, body, set, headers }) => {
        const env = body.env ?? principal.env ?? (await snapshots.defaultEnv(principal.projectId));
        checkBoundEnv(principal, env);
        // A batch an edge relay forwards again (same X-Svc-Delivery-Id) is counted once.
        const answer = await deliverOnce(ctx.store, deliveryIdOf(headers), principal.projectId, async () => ({ status: 202, body: await usage.ingest(principal.projectId, env, body.counts) }));
        set.status = answer.status;
        return answer.body;
      },
      {
        sdk: "events",
        jsonObjectBody: true,
        body: EvaluationsBody,
        ...describe({
          summary: "Send evaluation counts (what the SDK evaluated locally)",
          tag: "SDK runtime",
          auth: "server+browser",
          description:
            "The SDK counts its own evaluations (isKilled, isEnabled, getConfig, getVariant) per flag name and sends them with its events, every flush. " +
            "202 `{accepted, ignored}`: names the env's snapshot has are added to that flag's count for today (UTC); other names are ignored and never stored. " +
            "More than 1,000 names, or a count outside 1 to 10,000,000, is VALIDATION and counts nothing. " +
            "Counts are written every few seconds; OFREP and GrowthBook remote evaluation are counted by the server itself. An edge relay forwards these batches and its own counts.",
          response: { 202: EvaluationsReply },
        }),
      },
    )
    .get("/api/admin/flags/stale", async ({ principal, query }) => usage.stale(principal.projectId, query.env), {
      admin: true,
      query: StaleQuery,
      ...describe({
        summary: "Stale flags",
        tag: TAG,
        auth: "admin",
        description:
          "Killswitches, gates and configs that are stale on an env, with why: `one_value` when the published state has served one value to everyone for the project's `staleAfterDays` " +
          "(a killswitch whose sub-switches all equal its flat value; a gate without rules, or whose first rule has no conditions and passes 0 or 100 %; a config without rules; " +
          "none of them in a running rollout or overridden by a running experiment) counted from its last publish on that env; `not_evaluated` when no evaluation was counted on that env " +
          "for `staleAfterDays` days and the flag is older than that. One entry per flag and env, sorted by name.",
        response: { 200: StaleListSchema },
      }),
    })
    .get("/api/admin/flags/:name/usage", async ({ principal, params, query }) => usage.usage(principal.projectId, params.name, query.env), {
      admin: true,
      params: FlagNameParam,
      query: UsageQuery,
      ...describe({
        summary: "A flag's evaluations: last evaluated per env and a 30-day daily series",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "Counted from every path that evaluates: OFREP (single and bulk 200s), GrowthBook remote evaluation, the SDK's batches and edge relays. A sub-switch counts for its killswitch. " +
          "A name no killswitch, gate, config or experiment of the project has is 404.",
        response: { 200: FlagUsageSchema },
      }),
    });
}
