import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { t } from "elysia";

export const DeviceCodeBody = BodyObject({
  code_challenge: t.String({ pattern: "^[A-Za-z0-9_-]{43}$", description: "BASE64URL(SHA256(code_verifier)), RFC 7636" }),
  code_challenge_method: t.Literal("S256"),
  client_name: t.Optional(t.String({ maxLength: 100, description: "Shown on the approval page, e.g. `svc CLI on laptop`" })),
}, {
  // S256 of the code_verifier in DeviceTokenBody's example: the two examples make one flow.
  examples: [{ code_challenge: "NPsYzawS-__wqk67X9gyb4dr3JBo3hnlEi5MNyD5jX0", code_challenge_method: "S256", client_name: "svc CLI on dana-laptop" }],
});

export const DeviceCodeSchema = t.Object(
  {
    device_code: t.String({ description: "Secret of the polling client; never shown to the person" }),
    user_code: t.String({ description: "8 letters as ABCD-EFGH, shown in the terminal and on the approval page" }),
    verification_uri: t.String(),
    verification_uri_complete: t.String(),
    expires_in: Integer({ description: "Seconds (600)" }),
    interval: Integer({ description: "Seconds between polls (2)" }),
  },
  { title: "DeviceCode" },
);

export const DeviceTokenBody = BodyObject({
  device_code: t.String({ minLength: 1, maxLength: 256 }),
  code_verifier: t.String({ minLength: 43, maxLength: 128, pattern: "^[A-Za-z0-9._~-]+$", description: "The PKCE verifier whose S256 challenge was sent" }),
  grant_type: t.Optional(t.Literal("urn:ietf:params:oauth:grant-type:device_code")),
}, {
  examples: [
    {
      device_code: "4vWb8Q2sKx7LmN0pRtYz3AcDeFgHiJkLoPqRsTuVwXy",
      code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r-wW1gFWFOEjXk",
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
    },
  ],
});

export const TokenPairSchema = t.Object(
  {
    access_token: t.String({ description: "svc_at_…, valid 1 hour" }),
    refresh_token: t.String({ description: "svc_rt_…, valid 30 days, rotates on every use" }),
    token_type: t.Literal("Bearer"),
    expires_in: Integer({ description: "Seconds until the access token expires" }),
    project_id: t.Union([t.String(), t.Null()], { description: "Project bound at login (the default of X-Project-Id)" }),
    user_email: t.String(),
  },
  { title: "TokenPair" },
);

export const RefreshBody = BodyObject(
  { refresh_token: t.String({ minLength: 1, maxLength: 256 }) },
  { examples: [{ refresh_token: "svc_rt_7Gq2LmZ9xWc4VbN1sKd8RfT3yHj6Pa0EuOi5XnBvCzM" }] },
);

export const RevokeBody = BodyObject(
  { token: t.String({ minLength: 1, maxLength: 256, description: "An access or a refresh token" }) },
  { examples: [{ token: "svc_rt_7Gq2LmZ9xWc4VbN1sKd8RfT3yHj6Pa0EuOi5XnBvCzM" }] },
);

export const RevokeResultSchema = t.Object({ revoked: t.Boolean({ description: "False when the token was unknown or already revoked" }) });

export const ConfirmBody = BodyObject({
  device_code: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
  user_code: t.Optional(t.String({ minLength: 1, maxLength: 32 })),
  action: t.Union([t.Literal("approve"), t.Literal("deny")]),
  project_id: t.Optional(t.String({ maxLength: 128, description: "Project to bind; default the first one the person can reach" })),
  csrf: t.Optional(t.String({ maxLength: 128, description: "CSRF token (or header X-CSRF-Token)" })),
}, { examples: [{ user_code: "WDJB-MJHT", action: "approve", project_id: "0b9f6c2e-5d4a-4e8b-9c61-3f2a7d1e8b45" }] });

export const ConfirmResultSchema = t.Object({
  status: t.Union([t.Literal("approved"), t.Literal("denied")]),
  user_code: t.String(),
  project_id: t.Union([t.String(), t.Null()]),
});

export const DevicePageQuery = QueryObject({
  user_code: t.Optional(t.String({ maxLength: 32 })),
  project_id: t.Optional(t.String({ maxLength: 128 })),
});
