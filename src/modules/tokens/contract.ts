import { t } from "elysia";
import { BodyObject } from "../../lib/http";

export const TokenAccess = t.Union([t.Literal("read-only"), t.Literal("read-write")]);

export const MintTokenBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    access: TokenAccess,
  },
  { examples: [{ name: "CI deploy pipeline", access: "read-write" }] },
);

export const MintedTokenSchema = t.Object(
  {
    id: t.String(),
    token: t.String({ description: "svc_pat_…, shown only in this response" }),
    name: t.String(),
    access: TokenAccess,
    createdAt: t.String(),
  },
  { title: "MintedApiToken" },
);

export const ListedTokenSchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    access: TokenAccess,
    maskedToken: t.String({ description: "Prefix and the last four characters" }),
    createdBy: t.String({ description: "Actor email of whoever minted it" }),
    createdAt: t.String(),
  },
  { title: "ApiToken" },
);
