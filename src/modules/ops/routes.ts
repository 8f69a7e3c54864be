import { deliverOnce, deliveryIdOf } from "../../lib/deliveries";
import { Elysia, t } from "elysia";
import type { Principal } from "../../lib/auth";
import { forbidden } from "../../lib/errors";
import { IdParam, describe, jsonBodyPlugin, requestIdFor } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import { KEYS_CHANNEL, PUBLIC_TICKET_SCOPE } from "../keys/service";
import { BugBody, CreateItemBody, CreatedItemSchema, DedupedSchema, FeatureRequestBody, ItemListQuery, QueueItemSchema, UpdateItemBody } from "./contract";
import { SharedRateLimiter } from "../../lib/rate-limit";
import { ExpiringCache } from "../../lib/expiring-cache";
import { BODY_ERROR, DEFAULT_INTAKE_OPTIONS, INTAKE_CACHES, type IntakeBody, intakeBodyParser } from "./intake";
import type { FiledType } from "./service";

const TAG = "Queue items";
const INTAKE_TAG = "Public intake";

const TRANSITIONS_TEXT =
  "States: `pending_approval` (public intake) → `open` (approve; emits `ticket.approved`) or `rejected`; `open` → `in_progress`, `done` or `rejected`; " +
  "`in_progress` → `open` (back to the backlog) or `done`; `done` → `open` (reopen); `rejected` is final. Any other move is VALIDATION naming `status`; setting the current status again changes nothing. " +
  "svc itself reopens a done `error` or `alert` item when its error regresses or its alert fires again.";

const EVENTS_TEXT =
  "Outbox events (delivered to the project's subscribed connectors): `bug.created` and `feature_request.created` when a bug or feature request is filed here (at once), " +
  "or, for an item filed through the public intake, only when it is approved (a pending item fires no connector); `ticket.approved` when a pending item is approved; " +
  "each carries `{source, item: {id, number, type, status, priority, title, stepsToReproduce, actualResult, expectedResult, useCase, source, reportedBy, createdAt}}` " +
  "(`source` is `public` for a public intake item, whose text connectors hand to agents as untrusted data; else `admin` or `platform`), plus `approvedBy` for `ticket.approved`.";

/** Every admin route of the queue: list, get (id or number), file, update, approve, reject. */
function adminRoutes(ctx: AppContext) {
  const { ops } = ctx.services;
  return new Elysia({ name: "ops-admin", seed: ctx, prefix: "/api/admin/ops" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("", async ({ principal, query }) => await ops.list(principal.projectId, { q: query.q, type: query.type, status: query.status }), {
      admin: true,
      query: ItemListQuery,
      ...describe({
        summary: "Queue items: pending approval first, then newest first",
        tag: TAG,
        auth: "admin",
        description: "A bare array. `type` and `status` narrow it; `q` is a case-insensitive substring over the title, stepsToReproduce, actualResult, expectedResult and useCase.",
        response: { 200: t.Array(QueueItemSchema) },
      }),
    })
    .get("/:id", async ({ principal, params }) => await ops.get(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Get a queue item by id or number",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "`{id}` is the item's id (`fb_…`) or its number in the project (`42`, or `#42` URL-encoded).",
        response: { 200: QueueItemSchema },
      }),
    })
    .post(
      "",
      async ({ principal, body, set }) => {
        const created = await ops.create(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateItemBody,
        ...describe({
          summary: "File a bug or a feature request",
          tag: TAG,
          auth: "admin",
          description:
            "`type` is `bug` or `feature_request`: `error` and `alert` items are filed by svc itself (for tracked errors new or regressed, and firing alert rules) and are refused here (VALIDATION naming type). " +
            "`priority` is one of high, medium (default), low, nice_to_have. The item gets the project's next `number` (from 1, no gap, no duplicate, also with several servers) and starts `open`: " +
            "it was filed by someone who may write, so it needs no approval (only the public intake's items wait in `pending_approval`). No dedupe here: the same title may be filed twice on purpose. " +
            `Audited as ops.create.\n\n${EVENTS_TEXT}`,
          response: { 201: CreatedItemSchema },
        }),
      },
    )
    .patch("/:id", async ({ principal, params, body }) => await ops.update(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateItemBody,
      ...describe({
        summary: "Update a queue item: title, priority, status, text fields",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: `Only the fields sent change (null or blank clears a text field). ${TRANSITIONS_TEXT} Audited as ops.update (ops.approve for pending_approval → open, ops.reject for → rejected).`,
        response: { 200: QueueItemSchema },
      }),
    })
    .post("/:id/approve", async ({ principal, params }) => await ops.approve(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Approve a pending item (→ open)",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "pending_approval → open; emits `ticket.approved` (payload: the item and `approvedBy`) and is audited as ops.approve. An item in any other status is VALIDATION naming status.",
        response: { 200: QueueItemSchema },
      }),
    })
    .post("/:id/reject", async ({ principal, params }) => await ops.reject(principal.projectId, params.id, principal.actor), {
      admin: true,
      params: IdParam,
      ...describe({
        summary: "Reject an item (pending or open → rejected)",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description: "pending_approval or open → rejected (final); audited as ops.reject. From any other status: VALIDATION naming status.",
        response: { 200: QueueItemSchema },
      }),
    });
}

const CORS_ALLOW_HEADERS = "Content-Type, X-SDK-Key, X-Request-Id";

/**
 * The public intake ({edge_url}; also served by `svc serve --edge-only`):
 * POST /ops/bug and /ops/feature-request with a client key, and their CORS
 * preflights. Each request passes, in order: the per-address limit, the
 * client key (scope `tickets:public_create`), the per-key limit, the
 * project's opt-in, the browser origin (the project's domain only), the
 * intake's body limit and JSON, then the body schema.
 */
function intakeRoutes(ctx: AppContext) {
  const { ops } = ctx.services;
  const options = { ...DEFAULT_INTAKE_OPTIONS, ...ctx.options.intake };
  // Shared by every server on the store: behind N servers a caller still gets each limit once.
  const limits = new SharedRateLimiter(ctx.store);
  const origins = new ExpiringCache((origin: string) => ops.isIntakeOrigin(origin), INTAKE_CACHES.origins);
  // A project's domain changed (the keys module announces it for the keys it re-stamps): forget the cached answers.
  ctx.store.listen(KEYS_CHANNEL, (payload) => {
    if (payload.startsWith("minted:") || payload.startsWith("revoked:")) return;
    origins.clear();
    projects.clear();
  });
  const projects = new ExpiringCache((projectId: string) => ops.intakeProject(projectId), INTAKE_CACHES.settings);
  const callers = new WeakMap<Request, Principal>();
  const parse = intakeBodyParser(() => options.maxBodyBytes);

  type Set = { headers: Record<string, string | number>; status?: number | string };
  const allowOrigin = (set: Set, origin: string) => {
    set.headers["access-control-allow-origin"] = origin;
    set.headers["access-control-expose-headers"] = "Retry-After, X-Request-Id";
  };

  const gate = async ({ request, headers, body, set }: { request: Request; headers: Record<string, string | undefined>; body: unknown; set: Set }) => {
    const origin = headers.origin;
    set.headers.vary = "Origin";
    // A page of a project that takes public tickets may read every answer (its errors too, 429s included).
    if (origin && (await origins.get(origin))) allowOrigin(set, origin);
    await limits.take(`intake:address:${ctx.network.clientAddress(request)}`, options.perAddress);
    const principal = await ctx.authenticator.sdk(headers, "client");
    if (!principal.scopes.includes(PUBLIC_TICKET_SCOPE)) {
      throw forbidden(`This client key lacks the ${PUBLIC_TICKET_SCOPE} scope`, `X-SDK-Key: mint a client key with the scope ${PUBLIC_TICKET_SCOPE}`);
    }
    await limits.take(`intake:key:${principal.credentialId}`, options.perKey);
    const project = await projects.get(principal.projectId);
    if (origin && origin !== project.origin) {
      throw forbidden(
        "Origin not allowed for this project",
        project.origin ? `Origin: ${origin} is not the project's domain (${project.origin})` : "Origin: the project has no domain; set it (PATCH /api/admin/projects/{id} {\"domain\"}) to take tickets from its pages",
      );
    }
    const error = (body as IntakeBody | undefined)?.[BODY_ERROR];
    if (error) throw error;
    callers.set(request, principal);
  };

  /**
   * The CORS preflight of the two intake paths (it carries no key): 204 with
   * the CORS headers for an origin that is the domain of a project taking
   * public tickets; 403 without them for any other. A route of its own (not a
   * request hook), so that preflights are counted and logged like every answer.
   */
  const preflight = async ({ request, set }: { request: Request; set: Set }): Promise<Response> => {
    const origin = request.headers.get("origin");
    const headers: Record<string, string> = { vary: "Origin", allow: "POST, OPTIONS" };
    // The pipeline's request id (set before this hook runs).
    headers["x-request-id"] = String(set.headers["x-request-id"] ?? requestIdFor(request.headers.get("x-request-id")));
    if (origin && !(await origins.get(origin))) {
      const body = { error: "Origin not allowed", code: "FORBIDDEN", detail: "Origin: not the domain of a project that takes public tickets" };
      return new Response(JSON.stringify(body), { status: 403, headers: { ...headers, "content-type": "application/json" } });
    }
    if (origin) {
      headers["access-control-allow-origin"] = origin;
      headers["access-control-allow-methods"] = "POST, OPTIONS";
      headers["access-control-allow-headers"] = CORS_ALLOW_HEADERS;
      headers["access-control-expose-headers"] = "Retry-After, X-Request-Id";
      headers["access-control-max-age"] = "600";
    }
    return new Response(null, { status: 204, headers });
  };

  const file = (type: FiledType) => async ({ request, body, set, headers }: { request: Request; body: Parameters<typeof ops.intake>[2]; set: Set; headers: Record<string, string | undefined> }) => {
    const principal = callers.get(request)!;
    // An item an edge relay forwards again (same X-Svc-Delivery-Id) is filed once.
    const answer = await deliverOnce<{ id: string; number: number } | { number: number; deduped: true }>(ctx.store, deliveryIdOf(headers), principal.projectId, async () => {
      const result = await ops.intake(principal.projectId, type, body, principal.actor);
      return result.created ? { status: 201, body: { id: result.id, number: result.number } } : { status: 200, body: { number: result.number, deduped: true as const } };
    });
    set.status = answer.status;
    return answer.body;
  };

  const LIMITS_TEXT =
    `Limits (shared by every server on the store): ${options.perAddress.limit} requests per client address and ${options.perKey.limit} per client key per minute as configured ` +
    "(SERVICE_INTAKE_LIMIT_PER_ADDRESS, SERVICE_INTAKE_LIMIT_PER_KEY; defaults 60 and 600); over either: 429 `{error: \"Too many requests\", code: \"BAD_REQUEST\"}` with Retry-After (seconds). " +
    `A body over ${options.maxBodyBytes} bytes (SERVICE_INTAKE_MAX_BODY_BYTES, default 32 KiB): 413 \`{error: "Body too large", code: "BAD_REQUEST"}\`. ` +
    "When the store cannot take the write: 503 `{error: \"Unavailable\"}` (no code) with Retry-After. " +
    "The key must be a client key with scope `tickets:public_create` (FORBIDDEN otherwise) of a project with `publicTicketCreation` on (FORBIDDEN otherwise); no X-Project-Id: the project is the key's own. " +
    "A browser may call from the project's `domain` only: the CORS preflight (OPTIONS) answers 204 with `Access-Control-Allow-Origin` for the domain of a project that takes public tickets, 403 FORBIDDEN without CORS headers for any other origin; the POST itself is FORBIDDEN from an origin other than its project's domain.";
  const INTAKE_TEXT =
    "Files a new item in `pending_approval` (a person approves it on the dashboard, the CLI or the API): 201 `{id, number}`, and the outbox event. " +
    "When an item filed through this intake and still open (pending_approval, open or in_progress; of either type) has the same title, ignoring case and runs of whitespace, nothing is filed: 200 `{number, deduped: true}` with that item's number " +
    "(decided under the project's queue lock: concurrent repeats file one item). Items people or svc filed are never matched, so the answer says nothing about internal items.";

  const intakeDescribe = (summary: string, event: string) =>
    describe({
      summary,
      tag: INTAKE_TAG,
      auth: "client",
      errors: [413, 429],
      description: `${INTAKE_TEXT} Emits \`${event}\`.\n\n${LIMITS_TEXT}`,
      response: { 200: DedupedSchema, 201: CreatedItemSchema },
    });
  return new Elysia({ name: "ops-intake", seed: ctx })
    // Preflights are HTTP plumbing: the OpenAPI document leaves OPTIONS out (the POSTs' descriptions say what they answer).
    .options("/ops/feature-request", preflight, { detail: { hide: true } })
    .options("/ops/bug", preflight, { detail: { hide: true } })
    .post("/ops/feature-request", file("feature_request"), {
      // The named "json" parser is never reached (ours always answers); it makes the OpenAPI document give the body its content type.
      parse: [parse, "json" as unknown as typeof parse],
      transform: gate,
      body: FeatureRequestBody,
      ...intakeDescribe("Public intake: request a feature", "feature_request.created"),
    })
    .post("/ops/bug", file("bug"), {
      parse: [parse, "json" as unknown as typeof parse],
      transform: gate,
      body: BugBody,
      ...intakeDescribe("Public intake: report a bug", "bug.created"),
    });
}

export function opsRoutes(ctx: AppContext) {
  return new Elysia({ name: "ops", seed: ctx }).use(adminRoutes(ctx)).use(intakeRoutes(ctx));
}
