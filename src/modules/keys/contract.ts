import { t } from "elysia";
import { BodyObject } from "../../lib/http";

export const KeyType = t.Union([t.Literal("admin"), t.Literal("client"), t.Literal("server")]);

export const MintKeyBody = BodyObject(
  {
    type: KeyType,
    name: t.Optional(t.String({ maxLength: 200 })),
    scopes: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 16, description: "Defaults to every scope of the type; a client key may be minted without `tickets:public_create`." })),
  },
  { examples: [{ type: "server", name: "checkout-api (prod)", scopes: ["sdk:read"] }] },
);

export const MintedKeySchema = t.Object({
  id: t.String(),
  key: t.String({ description: "The secret, shown only in this response" }),
  type: KeyType,
  name: t.String(),
  scopes: t.Array(t.String()),
  createdAt: t.String(),
}, { title: "MintedKey" });

export const ListedKeySchema = t.Object({
  id: t.String(),
  type: KeyType,
  name: t.String(),
  scopes: t.Array(t.String()),
  maskedKey: t.String({ description: "Type prefix and the last four characters" }),
  allowedOrigin: t.Union([t.String(), t.Null()]),
  createdAt: t.String(),
  lastUsedAt: t.Union([t.String(), t.Null()]),
}, { title: "SdkKey" });
