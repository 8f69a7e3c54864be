import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { OUTBOX_EVENT_TYPES } from "../../lib/outbox";
import { eventPayloadsMarkdown } from "./events";
import { DELIVERIES_MAX_LIMIT, NAME_MAX } from "./service";

// The literals one by one, so that typed clients see the union.
const Provider = t.Union(
  [
    t.Literal("google_sheets"),
    t.Literal("linear"),
    t.Literal("slack"),
    t.Literal("claude_trigger"),
    t.Literal("cursor_trigger"),
    t.Literal("github_trigger"),
    t.Literal("jules_trigger"),
    t.Literal("webhook"),
  ],
  { description: "OAuth/app: google_sheets, linear, slack. Triggers: claude_trigger, cursor_trigger, github_trigger, jules_trigger. And webhook." },
);
const EventType = t.String({ description: `One of ${OUTBOX_EVENT_TYPES.join(", ")}`, examples: ["bug.created"] });
const Events = t.Array(EventType, { maxItems: 20, description: "Event types this connector hears (duplicates dropped)", examples: [["bug.created", "alert.firing"]] });
const Config = t.Object(
  {},
  {
    additionalProperties: true,
    description:
      "Provider settings. webhook: `url`. claude_trigger: `routineId`. cursor_trigger: `repoUrl`, optional `ref`, `model`. github_trigger: `owner`, `repo`, optional `eventType`. jules_trigger: `source`, optional `startingBranch`. " +
      "After connecting (PATCH): slack `channel`; linear `teamId`, optional `labelIds`; google_sheets `spreadsheetId`, optional `range`. Any other field is VALIDATION.",
  },
);
const Secret = (description: string) => t.String({ minLength: 1, maxLength: 10_000, description });
const NumericId = (description: string) => t.Union([t.String({ minLength: 1, maxLength: 100 }), Integer({ minimum: 1 })], { description });

/** The credential fields, write-only: never in any answer. */
const CREDENTIAL_PROPERTIES = {
  fireToken: t.Optional(Secret("claude_trigger: the routine's API trigger token (optional)")),
  apiKey: t.Optional(Secret("cursor_trigger: a Cursor API key; jules_trigger: a Jules API key")),
  appId: t.Optional(NumericId("github_trigger: GitHub App id (with privateKey)")),
  privateKey: t.Optional(Secret("github_trigger: the App's private key, PEM")),
  installationId: t.Optional(NumericId("github_trigger: the App's installation id (optional: looked up from the repository)")),
  accessToken: t.Optional(Secret("github_trigger: a user access token instead of an App")),
};

export const CreateConnectorBody = BodyObject(
  {
    provider: Provider,
    name: t.Optional(t.String({ minLength: 1, maxLength: NAME_MAX, description: "Required for OAuth providers and webhooks; triggers default to provider + target" })),
    events: t.Optional(Events),
    config: t.Optional(Config),
    ...CREDENTIAL_PROPERTIES,
  },
  {
    examples: [
      { provider: "linear", name: "Bugs to Linear", events: ["bug.created"] },
      { provider: "slack", name: "Alerts to #ops", events: ["alert.firing", "alert.resolved"] },
      { provider: "webhook", name: "Our intake", events: ["bug.created", "ticket.approved"], config: { url: "https://hooks.example.com/svc" } },
      { provider: "claude_trigger", config: { routineId: "trig_01AbCdEf" }, fireToken: "sk-ant-oat01-…" },
      { provider: "cursor_trigger", config: { repoUrl: "https://github.com/acme/web" }, apiKey: "key_…" },
      { provider: "github_trigger", config: { owner: "acme", repo: "web" }, appId: "123456", privateKey: "-----BEGIN RSA PRIVATE KEY-----\n…" },
      { provider: "github_trigger", config: { owner: "acme", repo: "web" }, accessToken: "github_pat_…" },
      { provider: "jules_trigger", config: { source: "sources/github/acme/web" }, apiKey: "AIza…" },
    ],
  },
);

export const UpdateConnectorBody = BodyObject(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: NAME_MAX })),
    events: t.Optional(Events),
    config: t.Optional(Config),
    enabled: t.Optional(t.Boolean()),
    ...CREDENTIAL_PROPERTIES,
  },
  { examples: [{ config: { channel: "#alerts" }, enabled: true }, { events: ["bug.created", "error.new"] }, { name: "Bugs to Linear (web)" }, { apiKey: "key_rotated…" }] },
);

export const ConnectorSchema = t.Object(
  {
    id: t.String({ description: "UUID" }),
    provider: Provider,
    kind: t.Union([t.Literal("oauth"), t.Literal("trigger"), t.Literal("webhook")]),
    name: t.String(),
    events: t.Array(t.String()),
    config: t.Record(t.String(), t.Unknown()),
    enabled: t.Boolean(),
    hasCredentials: t.Boolean({ description: "Credentials are stored (OAuth: connected); their values are never returned" }),
    credentialFields: t.Array(t.String(), { description: "Names of the stored credential fields" }),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "Connector",
    examples: [
      {
        id: "0b6f0f7e-2f59-4c1e-9c4b-2d8f3f6a1b2c",
        provider: "github_trigger",
        kind: "trigger",
        name: "github acme/web",
        events: ["bug.created"],
        config: { owner: "acme", repo: "web" },
        enabled: true,
        hasCredentials: true,
        credentialFields: ["appId", "privateKey"],
        createdAt: "2026-11-20T09:00:00.000Z",
        updatedAt: "2026-11-20T09:00:00.000Z",
      },
    ],
  },
);

export const ConnectorDetailSchema = t.Composite([
  ConnectorSchema,
  t.Object({ deliveries: t.Object({ pending: Integer(), delivered: Integer(), failed: Integer() }, { description: "Deliveries of this connector by status" }) }),
]);

export const CreatedSchema = t.Object(
  {
    id: t.String({ description: "The connector's UUID" }),
    secret: t.Optional(t.String({ description: "webhook only: the signing secret (whsec_…), shown once" })),
  },
  { examples: [{ id: "0b6f0f7e-2f59-4c1e-9c4b-2d8f3f6a1b2c" }, { id: "5c1d…", secret: "whsec_Qx3b9LmT0aZr7KpE…" }] },
);

const AttemptSchema = t.Object({
  attempt: Integer(),
  at: t.String(),
  status: t.Union([Integer(), t.Null()], { description: "The vendor's HTTP status; null when no answer came" }),
  error: t.Union([t.String(), t.Null()]),
  durationMs: Integer(),
  response: t.Union([t.String(), t.Null()], { description: "The start of the vendor's answer (500 characters)" }),
});

export const DeliverySchema = t.Object(
  {
    id: t.String({ description: "dlv_…" }),
    connectorId: t.String(),
    eventId: t.String({ description: "evt_…: the Idempotency-Key every attempt carries" }),
    eventType: t.String(),
    test: t.Boolean(),
    status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")]),
    attempts: Integer(),
    nextAttemptAt: t.Union([t.String(), t.Null()]),
    lastStatus: t.Union([Integer(), t.Null()]),
    lastError: t.Union([t.String(), t.Null()]),
    createdAt: t.String(),
    updatedAt: t.String(),
    deliveredAt: t.Union([t.String(), t.Null()]),
    data: t.Record(t.String(), t.Unknown(), { description: "The event's payload" }),
    log: t.Array(AttemptSchema, { description: "Every attempt, oldest first" }),
  },
  {
    title: "Delivery",
    examples: [
      {
        id: "dlv_8fK2mQ",
        connectorId: "0b6f0f7e-2f59-4c1e-9c4b-2d8f3f6a1b2c",
        eventId: "evt_3Lw9cX",
        eventType: "bug.created",
        test: false,
        status: "delivered",
        attempts: 2,
        nextAttemptAt: null,
        lastStatus: 204,
        lastError: null,
        createdAt: "2026-11-20T09:00:00.000Z",
        updatedAt: "2026-11-20T09:00:01.200Z",
        deliveredAt: "2026-11-20T09:00:01.200Z",
        data: { id: "fb_8fK2mQ", number: 42, type: "bug", title: "Checkout button does nothing" },
        log: [
          { attempt: 1, at: "2026-11-20T09:00:00.010Z", status: 503, error: "HTTP 503", durationMs: 12, response: "upstream down" },
          { attempt: 2, at: "2026-11-20T09:00:01.150Z", status: 204, error: null, durationMs: 9, response: null },
        ],
      },
    ],
  },
);

export const DeliveriesQuery = QueryObject({
  limit: t.Optional(t.String({ description: `1 to ${DELIVERIES_MAX_LIMIT}, default 20` })),
  status: t.Optional(t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")])),
  before: t.Optional(t.String({ description: "Older than this position (paging: the log is newest first)" })),
});

export const TestFireBody = BodyObject(
  {
    type: t.Optional(EventType),
    wait: t.Optional(t.Boolean({ description: "Wait up to 10 s for the attempt (default true)" })),
  },
  { examples: [{}, { type: "alert.firing" }, { wait: false }] },
);

export const TestFireSchema = t.Object({
  done: t.Boolean({ description: "The attempt was made (false: still queued when the wait ended)" }),
  delivery: DeliverySchema,
});

export const OAuthStartBody = BodyObject(
  { returnTo: t.Optional(t.String({ maxLength: 500, description: "A path on this server the browser comes back to (default the connector's dashboard page)" })) },
  { examples: [{}, { returnTo: "/connectors" }] },
);

export const OAuthStartSchema = t.Object({
  url: t.String({ description: "The vendor's authorize URL (state and PKCE S256 included): send the browser there" }),
  expiresAt: t.String(),
});

export const DeliveryParams = t.Object({ id: t.String({ minLength: 1, maxLength: 128 }), deliveryId: t.String({ minLength: 1, maxLength: 128 }) });

export const PAYLOADS_DOC = eventPayloadsMarkdown();
