import { Elysia, t } from "elysia";
import type { AppContext } from "../../app";
import { immediate } from "../../lib/db";
import { IdParam, ListQuery, describe, filterByQuery } from "../../lib/http";
import { ListedKeySchema, MintKeyBody, MintedKeySchema } from "./model";

export function keyRoutes(ctx: AppContext) {
  const { keys, projects } = ctx.services;
  return new Elysia({ name: "keys", seed: ctx, prefix: "/api/admin/keys" })
    .use(ctx.auth)
    // "" rather than "/": the documented path is then /api/admin/keys, as DECISIONS.md names it.
    .post(
      "",
      ({ principal, body, set }) => {
        // The origin is read in the minting transaction, so a concurrent domain change cannot leave this key on the old one.
        const minted = immediate(ctx.db, () => keys.mint(principal.projectId, { ...body, allowedOrigin: projects.allowedOrigin(principal.projectId) }));
        set.status = 201;
        return { id: minted.id, key: minted.key, type: minted.type, name: minted.name, scopes: minted.scopes, createdAt: minted.createdAt };
      },
      {
        admin: true,
        body: MintKeyBody,
        ...describe({ summary: "Mint an SDK key (the secret is shown once)", tag: "SDK keys", auth: "admin", response: { 201: MintedKeySchema } }),
      },
    )
    .get(
      "",
      ({ principal, query }) =>
        filterByQuery(keys.list(principal.projectId), query.q, (k) => [k.name]).map((k) => ({
          id: k.id,
          type: k.type,
          name: k.name,
          scopes: k.scopes,
          maskedKey: k.maskedKey,
          allowedOrigin: k.allowedOrigin,
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
      ({ principal, params, set }) => {
        keys.revoke(principal.projectId, params.id);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({ summary: "Revoke an SDK key", tag: "SDK keys", auth: "admin", errors: [404] }),
      },
    );
}
