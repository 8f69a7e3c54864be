import { t } from "elysia";
import { BodyObject } from "../../lib/http";

export const KeyType = t.Union([t.Literal("admin"), t.Literal("client"), t.Literal("server"), t.Literal("browser")]);

const KeyEnv = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);
const BoundEnv = t.Union([KeyEnv, t.Null()], { description: "The one env a browser key evaluates; null for other types" });

export const MintKeyBody = BodyObject(
  {
    type: KeyType,
    name: t.Optional(t.String({ maxLength: 200 })),
    env: t.Optional(t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "Browser keys only: the env it evaluates (default the project's defaultEnv)" })),
    scopes: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 16, description: "Defaults to every scope of the type; a client key may be minted without `tickets:public_create`." })),
  },
  { examples: [{ type: "server", name: "checkout-api (prod)", scopes: ["sdk:read"] }, { type: "browser", name: "web app", env: "prod" }] },
);

export const MintedKeySchema = t.Object({
  id: t.String(),
  key: t.String({ description: "The secret, shown only in this response" }),
  type: KeyType,
  name: t.String(),
  scopes: t.Array(t.String()),
  env: BoundEnv,
  createdAt: t.String(),
}, { title: "MintedKey" });

export const ListedKeySchema = t.Object({
  id: t.String(),
  type: KeyType,
  name: t.String(),
  scopes: t.Array(t.String()),
  maskedKey: t.String({ description: "Type prefix and the last four characters" }),
  allowedOrigin: t.Union([t.String(), t.Null()]),
  env: BoundEnv,
  createdAt: t.String(),
  lastUsedAt: t.Union([t.String(), t.Null()]),
}, { title: "SdkKey" });
