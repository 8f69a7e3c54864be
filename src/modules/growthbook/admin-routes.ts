import { Elysia } from "elysia";
import { describe } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { GrowthbookStatusQuery, GrowthbookStatusSchema } from "./contract";

/**
 * The admin side of the GrowthBook protocol, apart from routes.ts because an edge relay serves those SDK
 * paths (relay.ts RELAY_SNAPSHOT_ROUTES) and has no admin API.
 */
export function growthbookAdminRoutes(ctx: AppContext) {
  const { growthbook } = ctx.services;
  return new Elysia({ name: "growthbook-admin", seed: ctx })
    .use(ctx.auth)
    .get("/api/admin/growthbook", async ({ principal, query }) => await growthbook.status(principal.projectId, query.env), {
      admin: true,
      query: GrowthbookStatusQuery,
      ...describe({
        summary: "What GrowthBook SDKs get on an env",
        tag: "SDK keys",
        auth: "admin",
        description:
          "Read from the env's published snapshot (`env` query, default the project's `defaultEnv`) through the same mapping `GET /api/features/{key}` serves: " +
          "its revision and ETag, how many features and saved groups the payload holds and its size, and `unmapped`: each construct GrowthBook's SDKs cannot evaluate as svc does " +
          "(`feature`, `construct`, and `served`: what the payload serves instead; docs/sdk.md lists them). Empty when everything maps. " +
          "`paths` are where GrowthBook's SDKs connect (`apiHost` = this server, `clientKey` = a **server** SDK key). Viewers and read-only tokens may read it.",
        response: { 200: GrowthbookStatusSchema },
      }),
    });
}
