import { Elysia, t } from "elysia";
import type { Credential, Principal } from "../../lib/auth";
import type { AppContext } from "../../lib/module";
import { IdParam, ListQuery, describe, jsonBodyPlugin, numberParam } from "../../lib/http";
import { escapeHtml, messagePage } from "../../web/pages";
import {
  ConnectorDetailSchema,
  ConnectorSchema,
  CreateConnectorBody,
  CreatedSchema,
  DeliveriesQuery,
  DeliveryParams,
  DeliverySchema,
  OAuthStartBody,
  OAuthStartSchema,
  PAYLOADS_DOC,
  TestFireBody,
  TestFireSchema,
  UpdateConnectorBody,
} from "./contract";
import { OAUTH_CALLBACK_PATH, type CreateInput, type OAuthBrowser, type PatchInput } from "./service";

const TAG = "Connectors";

/**
 * Creating, editing, enabling, test-firing, retrying, connecting and deleting connectors is the admin role's (an
 * owner, an admin key): a connector sends the project's events, and its target decides where svc's own requests go.
 * Editors, viewers and API tokens read, and see webhook URLs masked and no vendor answers.
 */
const ADMIN_ROLE = "manage" as const;
const isAdmin = (principal: Principal) => principal.permissions.includes("manage");
const ADMIN_NOTE = " Needs the admin role (an owner, or an admin key): editors and API tokens get FORBIDDEN.";

const DELIVERY_NOTES =
  "Delivery: every event goes through a durable outbox written in the same transaction as the change; a drainer on each server fans it out to the enabled connectors that subscribe to its type and sends it, " +
  "retrying with exponential backoff (1 s doubling to 1 h; `failed` after 20 attempts). At least once: every call carries `Idempotency-Key: <event id>` (the same on every attempt), `X-Svc-Event`, `X-Svc-Delivery` and `X-Svc-Attempt`; " +
  "a receiver drops a repeat by the key (a server killed between the vendor's answer and recording it sends once more). Webhooks are signed: `X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" with the secret>`.\n\n" +
  "Event types and their `data`:\n" +
  PAYLOADS_DOC;

/** The browser's svc session on the OAuth callback (a GET the vendor redirects to), or null when it has none. */
async function signedInBrowser(ctx: AppContext, request: Request, headers: Record<string, string | undefined>): Promise<OAuthBrowser | null> {
  if (headers.authorization) return null;
  let credential: Credential;
  try {
    credential = await ctx.authenticator.identify(request, headers);
  } catch {
    return null;
  }
  if (credential.kind !== "session") return null;
  return {
    sessionId: credential.credentialId,
    userId: credential.userId ?? null,
    administers: async (projectId) => (await credential.access(projectId))?.permissions.includes("manage") ?? false,
  };
}

export function connectorRoutes(ctx: AppContext) {
  const { connectors } = ctx.services;
  const admin = new Elysia({ name: "connectors", seed: ctx, prefix: "/api/admin/connectors" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await connectors.list(principal.projectId, query.q, isAdmin(principal)), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Connectors of the project (q over name and provider)", tag: TAG, auth: "admin", description: "No credential is ever returned: `hasCredentials` and `credentialFields` say what is stored. A webhook's `config.url` is shown whole to admins (owners, admin keys) only; everyone else sees `scheme://host/****`.", response: { 200: t.Array(ConnectorSchema) } }),
    })
    .get("/:id", async ({ principal, params }) => await connectors.get(principal.projectId, params.id, isAdmin(principal)), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a connector, with its delivery counts", tag: TAG, auth: "admin", errors: [404], response: { 200: ConnectorDetailSchema } }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const { created, ...answer } = await connectors.create(principal.projectId, body as CreateInput, principal.actor);
        set.status = created ? 201 : 200;
        return answer;
      },
      {
        admin: ADMIN_ROLE,
        jsonObjectBody: true,
        body: CreateConnectorBody,
        ...describe({
          summary: "Create a connector (discriminated on provider)",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description:
            "**OAuth/app** (`google_sheets`, `linear`, `slack`): `provider`, `name`, `events`. Created with enabled false, an empty config and no credentials; `POST /{id}/oauth/start` connects it (the callback stores the tokens, sealed, and enables it); set where it posts with PATCH `config`. " +
            "**Triggers**: `config` plus the provider's credential fields; enabled at once; `events` defaults to `[\"bug.created\"]`, `name` to the provider and target. " +
            "`claude_trigger`: `config.routineId`, optional `fireToken`. `cursor_trigger`: `config.repoUrl` (optional `ref`, `model`), `apiKey`. " +
            "`github_trigger`: `config.owner` + `config.repo` (optional `eventType`), and `appId` + `privateKey` (a GitHub App, optional `installationId`) or `accessToken` (a user token). `jules_trigger`: `config.source` (optional `startingBranch`), `apiKey`. " +
            "Trigger creates are idempotent by natural key (routineId; repoUrl; owner/repo, case-insensitive; source): creating again updates that row (name and events when sent, config and credentials) and answers **200** with the same id; a new one answers 201. " +
            "**webhook**: `name`, `events`, `config.url`; the answer carries `secret` (whsec_…) once: keep it to verify signatures (rotate with `POST /{id}/rotate-secret`). " +
            "Credentials are encrypted at rest (AES-256-GCM, key SERVICE_SECRET_KEY or `<data>/secret.key`) and never returned. Every write is in the audit trail. " +
            "A webhook's `config.url` must be a public address: a URL that names or resolves to a loopback, private (RFC 1918, ULA), link-local, CGNAT, multicast or unspecified address, or a cloud metadata name, is VALIDATION (the operator allows private targets with SERVICE_CONNECTOR_PRIVATE_TARGETS=allow); the address is checked again at each delivery and redirects are not followed." +
            ADMIN_NOTE +
            "\n\n" +
            DELIVERY_NOTES,
          response: { 200: CreatedSchema, 201: CreatedSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await connectors.update(principal.projectId, params.id, body as PatchInput, principal.actor), {
      admin: ADMIN_ROLE,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateConnectorBody,
      ...describe({
        summary: "Update a connector",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "Fields sent replace the stored ones: `name`, `events`, `enabled`; `config` is merged into the stored config (a field sent replaces it, `null` removes an optional one); credential fields of the provider are merged likewise. " +
          "An OAuth connector cannot be enabled before it is connected (VALIDATION). A trigger's target may not become another connector's (409). A webhook's new `config.url` is checked as at create." + ADMIN_NOTE,
        response: { 200: ConnectorSchema },
      }),
    })
    .post("/:id/enable", async ({ principal, params }) => await connectors.setEnabled(principal.projectId, params.id, true, principal.actor), {
      admin: ADMIN_ROLE,
      params: IdParam,
      ...describe({ summary: "Enable a connector", tag: TAG, auth: "admin", errors: [404], description: `Deliveries queued while it was disabled go out now. An OAuth connector must be connected first (VALIDATION).${ADMIN_NOTE}`, response: { 200: ConnectorSchema } }),
    })
    .post("/:id/disable", async ({ principal, params }) => await connectors.setEnabled(principal.projectId, params.id, false, principal.actor), {
      admin: ADMIN_ROLE,
      params: IdParam,
      ...describe({ summary: "Disable a connector", tag: TAG, auth: "admin", errors: [404], description: `Hears no new events; deliveries already queued wait (they go out if it is enabled again).${ADMIN_NOTE}`, response: { 200: ConnectorSchema } }),
    })
    .delete(
      "/:id",
      async ({ principal, params, set }) => {
        await connectors.remove(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      { admin: ADMIN_ROLE, params: IdParam, ...describe({ summary: "Delete a connector", tag: TAG, auth: "admin", errors: [400, 404], description: `With its delivery log; queued deliveries are dropped. Refused (400 VALIDATION naming them) while an alert rule's \`notify.connectorId\` names it: point those rules elsewhere first.${ADMIN_NOTE}` }) },
    )
    .get(
      "/:id/deliveries",
      async ({ principal, params, query }) =>
        await connectors.deliveries(principal.projectId, params.id, { limit: numberParam(query.limit), status: query.status, before: numberParam(query.before) }, isAdmin(principal)),
      {
        admin: true,
        params: IdParam,
        query: DeliveriesQuery,
        ...describe({
          summary: "The connector's delivery log, newest first",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Each delivery with its status (pending, delivered, failed), attempts, the vendor's last status and error, the event's payload, and every attempt. `limit` 1 to 100 (default 20); `status` filters. " +
            "Each attempt's `response` (the start of the vendor's answer, at most 500 characters of the 64 KiB svc reads) is shown to admins only; for others it is null.",
          response: { 200: t.Array(DeliverySchema) },
        }),
      },
    )
    .get("/:id/deliveries/:deliveryId", async ({ principal, params }) => await connectors.delivery(principal.projectId, params.id, params.deliveryId, isAdmin(principal)), {
      admin: true,
      params: DeliveryParams,
      ...describe({ summary: "One delivery with its attempts", tag: TAG, auth: "admin", errors: [404], response: { 200: DeliverySchema } }),
    })
    .post("/:id/deliveries/:deliveryId/retry", async ({ principal, params }) => await connectors.retry(principal.projectId, params.id, params.deliveryId, principal.actor), {
      admin: ADMIN_ROLE,
      params: DeliveryParams,
      ...describe({ summary: "Send a failed (or waiting) delivery again now", tag: TAG, auth: "admin", errors: [404], description: `Due at once with a fresh attempt budget. A delivered one is VALIDATION (test-fire instead).${ADMIN_NOTE}`, response: { 200: DeliverySchema } }),
    })
    .post(
      "/:id/test",
      async ({ principal, params, body, set }) => {
        const result = await connectors.testFire(principal.projectId, params.id, body, principal.actor);
        set.status = result.done ? 200 : 202;
        return result;
      },
      {
        admin: ADMIN_ROLE,
        jsonObjectBody: true,
        params: IdParam,
        body: TestFireBody,
        ...describe({
          summary: "Test-fire: send a sample event through the real path",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "Queues a sample event of `type` (default the connector's first subscribed type; `data.test` true, envelope `test` true) for this connector only, even when it is disabled, through the same drainer, adapter and signature as real events. " +
            "Tried once (not retried). Waits up to 10 s for the attempt: 200 with `done` true and the delivery, or 202 with `done` false when it has not been attempted yet." + ADMIN_NOTE,
          response: { 200: TestFireSchema, 202: TestFireSchema },
        }),
      },
    )
    .post("/:id/rotate-secret", async ({ principal, params }) => await connectors.rotateSecret(principal.projectId, params.id, principal.actor), {
      admin: ADMIN_ROLE,
      params: IdParam,
      ...describe({ summary: "New signing secret for a webhook (shown once)", tag: TAG, auth: "admin", errors: [404], description: `The old secret stops signing at once.${ADMIN_NOTE}`, response: { 200: CreatedSchema } }),
    })
    .post(
      "/:id/oauth/start",
      async ({ principal, params, body, request }) =>
        await connectors.oauthStart(
          principal.projectId,
          params.id,
          {
            origin: ctx.network.publicOrigin(request),
            returnTo: body.returnTo,
            binding: { sessionId: principal.kind === "session" ? principal.credentialId : null, userId: principal.userId ?? null },
          },
          principal.actor,
        ),
      {
        admin: ADMIN_ROLE,
        jsonObjectBody: true,
        params: IdParam,
        body: OAuthStartBody,
        ...describe({
          summary: "Start connecting an OAuth connector (slack, linear, google_sheets)",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            `Answers the vendor's authorize URL (OAuth 2.0 authorization code with \`state\` and PKCE S256, valid 10 minutes); send the browser there. The vendor redirects to \`${OAUTH_CALLBACK_PATH}\`, which must be reached in the browser session that started the flow (started with an access token: signed in as its person; with an admin key: signed in as an owner of the project), else it refuses and stores nothing; it exchanges the code, stores the tokens sealed and enables the connector, then redirects to \`returnTo\` or the connector's dashboard page. ` +
            "Tokens are refreshed before they expire. The OAuth app's client comes from SERVICE_SLACK_CLIENT_ID/SECRET, SERVICE_LINEAR_CLIENT_ID/SECRET, SERVICE_GOOGLE_CLIENT_ID/SECRET (VALIDATION when unset); its redirect URI must be registered with the vendor." +
            ADMIN_NOTE,
          response: { 200: OAuthStartSchema },
        }),
      },
    );

  // The vendor's redirect: a browser page, authenticated by the single-use state.
  const callback = new Elysia({ name: "connectors-oauth", seed: ctx }).get(
    OAUTH_CALLBACK_PATH,
    async ({ query, request, headers }) => {
      const result = await connectors.oauthCallback({ state: query.state, code: query.code, error: query.error }, await signedInBrowser(ctx, request, headers));
      const target = result.returnTo ?? (result.connectorId ? `/connectors/${result.connectorId}` : null);
      if (target) {
        const sep = target.includes("?") ? "&" : "?";
        const location = result.error ? `${target}${sep}oauth_error=${encodeURIComponent(result.error)}` : `${target}${sep}connected=1`;
        return new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
      }
      return new Response(messagePage("Connecting did not work", result.error ?? "Unknown authorization", `<a class="button" href="/connectors">${escapeHtml("Back to connectors")}</a>`), {
        status: 400,
        headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
      });
    },
    {
      query: t.Object({ state: t.Optional(t.String({ maxLength: 200 })), code: t.Optional(t.String({ maxLength: 2000 })), error: t.Optional(t.String({ maxLength: 500 })) }, { additionalProperties: true }),
      detail: { hide: true },
    },
  );
  return new Elysia({ name: "connectors-all", seed: ctx }).use(admin).use(callback);
}
