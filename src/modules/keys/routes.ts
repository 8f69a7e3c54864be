import { Elysia, t } from "elysia";
import { forbidden } from "../../lib/errors";
import { IdParam, ListQuery, QueryObject, describe, filterByQuery } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { ListedKeySchema, MintKeyBody, MintedKeySchema } from "./contract";

const MANAGERS = "Needs the manage permission: an admin key, or a signed-in owner. API tokens cannot mint or revoke keys.";

export function keyRoutes(ctx: AppContext) {
  const { keys } = ctx.services;
  return new Elysia({ name: "keys", seed: ctx, prefix: "/api/admin/keys" })
    .use(ctx.auth)
    // "" rather than "/": the documented path is then /api/admin/keys, as DECISIONS.md names it.
    .post(
      "",
      async ({ principal, body, set }) => {
        // The key gets the project's allowed origin, read in the minting transaction under the project's lock.
        const minted = await keys.mint(principal.projectId, { type: body.type, name: body.name, scopes: body.scopes, env: body.env, actor: principal.actor });
        set.status = 201;
        return { id: minted.id, key: minted.key, type: minted.type, name: minted.name, scopes: minted.scopes, env: minted.env, createdAt: minted.createdAt };
      },
      {
        admin: "manage",
        body: MintKeyBody,
        ...describe({
          summary: "Mint an SDK key (the secret is shown once)",
          tag: "SDK keys",
          auth: "admin",
          description:
            `${MANAGERS} Types: \`server\` (SDKs on your servers: snapshot, stream, OFREP, ingest), \`client\` (the public intake only), \`admin\` (the admin API), ` +
            "and `browser`: bound to one env (`env`, default the project's defaultEnv), meant to ship inside web and mobile apps; it gets evaluated answers only " +
            "(OFREP, GrowthBook remote evaluation) and may send events and errors (also as a Sentry DSN), never rules, salts, other envs, the snapshot or the stream.",
          response: { 201: MintedKeySchema },
        }),
      },
    )
    .get(
      "",
      async ({ principal, query }) =>
        filterByQuery(await keys.list(principal.projectId), query.q, (k) => [k.name]).map((k) => ({
          id: k.id,
          type: k.type,
          name: k.name,
          scopes: k.scopes,
          maskedKey: k.maskedKey,
          allowedOrigin: k.allowedOrigin,
          env: k.env,
          createdAt: k.createdAt,
          lastUsedAt: k.lastUsedAt,
        })),
      {
        admin: true,
        query: ListQuery,
        ...describe({ summary: "List live SDK keys (masked, never secrets)", tag: "SDK keys", auth: "admin", response: { 200: t.Array(ListedKeySchema) } }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params, query, set }) => {
        if (principal.kind === "admin_key" && principal.credentialId === params.id && query.force !== "true") {
          throw forbidden("This is the key making the call: revoking it would lock you out", "add ?force=true to revoke the calling key anyway");
        }
        await keys.revoke(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: "manage",
        params: IdParam,
        query: QueryObject({ force: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "Needed to revoke the admin key that makes the call" })) }),
        ...describe({ summary: "Revoke an SDK key", tag: "SDK keys", auth: "admin", errors: [404], description: `${MANAGERS} An admin key revoking itself needs \`?force=true\`.` }),
      },
    );
}
