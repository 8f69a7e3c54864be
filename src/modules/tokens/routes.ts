import { Elysia, t } from "elysia";
import type { AppContext } from "../../lib/module";
import { IdParam, describe } from "../../lib/http";
import { ListedTokenSchema, MintTokenBody, MintedTokenSchema } from "./contract";

const WHO_MANAGES =
  "Needs the manage permission: an admin key, or a signed-in owner. An API token may only list tokens, so a leaked CI token cannot make itself permanent.";

export function tokenRoutes(ctx: AppContext) {
  const { tokens } = ctx.services;
  return new Elysia({ name: "tokens", seed: ctx, prefix: "/api/admin/tokens" })
    .use(ctx.auth)
    .post(
      "",
      async ({ principal, body, set }) => {
        const minted = await tokens.mint(principal.projectId, body, principal.actor);
        set.status = 201;
        return { id: minted.id, token: minted.token, name: minted.name, access: minted.access, createdAt: minted.createdAt };
      },
      {
        admin: "manage",
        body: MintTokenBody,
        ...describe({
          summary: "Mint a project API token (the secret is shown once)",
          tag: "API tokens",
          auth: "admin",
          description: `For SERVICE_CLI_TOKEN. A read-only token gets FORBIDDEN on every write. ${WHO_MANAGES}`,
          response: { 201: MintedTokenSchema },
        }),
      },
    )
    .get(
      "",
      async ({ principal }) =>
        (await tokens.list(principal.projectId)).map((tk) => ({
          id: tk.id,
          name: tk.name,
          access: tk.access,
          maskedToken: tk.maskedToken,
          createdBy: tk.createdBy,
          createdAt: tk.createdAt,
        })),
      {
        admin: true,
        ...describe({ summary: "List live API tokens (masked, never secrets)", tag: "API tokens", auth: "admin", response: { 200: t.Array(ListedTokenSchema) } }),
      },
    )
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await tokens.revoke(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: "manage",
        params: IdParam,
        ...describe({ summary: "Revoke an API token", tag: "API tokens", auth: "admin", errors: [404], description: WHO_MANAGES }),
      },
    );
}
