import { Elysia } from "elysia";
import { describe } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { RelayParam, RelaysQuery, RelaysSchema } from "./contract";

const TAG = "Edge relays";

export function relaysRoutes(ctx: AppContext) {
  const { relays } = ctx.services;
  return new Elysia({ name: "relays", seed: ctx, prefix: "/api/admin/relays" })
    .use(ctx.auth)
    .get("", async ({ principal, query }) => await relays.list(principal.projectId, query.q), {
      admin: true,
      query: RelaysQuery,
      ...describe({
        summary: "Edge relays serving the project",
        tag: TAG,
        auth: "admin",
        description:
          "Every edge relay (`svc serve --relay`) that called this server with a key of the project in the last 30 days, newest first: the id, name and version it " +
          "sends in `X-Svc-Relay`, its address, when it was first and last seen, and whether it is connected (a stream open now, or seen open within the last 90 s) or stale. " +
          "A relay of a relay is listed by the relay it follows, not here. Any member may read.",
        response: { 200: RelaysSchema },
      }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await relays.forget(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: "manage",
        params: RelayParam,
        ...describe({
          summary: "Forget an edge relay",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Deletes the sighting (audited as relay.forget): for a relay taken down. A relay still running is listed again at its next call. Owners (manage) only.",
        }),
      },
    );
}
