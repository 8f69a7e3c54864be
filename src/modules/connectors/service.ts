import { type AuditActor, recordAudit } from "../../lib/audit";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, newUuid, nowIso, pkceChallenge, randomBase62, sha256Hex } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { OUTBOX_CHANNEL, OUTBOX_EVENT_TYPES } from "../../lib/outbox";
import { TargetRefused, checkTarget, outgoingFetch } from "../../lib/outgoing";
import type { Queryable, Tx } from "../../lib/store";
import { CONTROL_CHARS, checkLimit, checkNameChars } from "../../lib/validate";
import type { SendTarget } from "./adapters";
import { Drainer } from "./drainer";
import { samplePayload } from "./events";
import { OAuthError, type OAuthTokens, authorizeUrl, exchangeCode, refreshTokens } from "./oauth";
import { OAUTH_ENV, type OAuthProvider, type ResolvedConnectorOptions, connectorOptionsFromEnv, resolveConnectorOptions } from "./options";
import {
  type CredentialField,
  type Credentials,
  OAUTH_PROVIDERS,
  PROVIDER_SPECS,
  type Provider,
  type ProviderKind,
  checkConfig,
  checkCredentialSet,
  checkCredentials,
  isProvider,
  missingConfig,
} from "./providers";
import { SecretBox } from "./secrets";
import { newSigningSecret } from "./signing";
import {
  type AttemptRow,
  type ConnectorRow,
  type DeliveryRow,
  type DeliveryStatus,
  attemptsOf,
  connectorById,
  connectorByNaturalKey,
  connectorsNamed,
  connectorsOfProject,
  deleteConnector,
  deliveriesOf,
  deliveryCounts,
  findConnector,
  findDelivery,
  insertConnector,
  insertDeliveries,
  requeueDelivery,
  updateConnector,
} from "./store";

export const NAME_MAX = 128;
export const DELIVERIES_MAX_LIMIT = 100;
export const DELIVERIES_DEFAULT_LIMIT = 20;
/** How long an OAuth authorization may take between start and callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;
/** Where vendors send the browser back (a browser path, outside the dashboard's /connectors section). */
export const OAUTH_CALLBACK_PATH = "/oauth/connectors/callback";
/** How long POST /{id}/test waits for the first attempt before answering 202. */
export const TEST_WAIT_MS = 10_000;

export const ACTIONS = {
  create: "connector.create",
  update: "connector.update",
  enable: "connector.enable",
  disable: "connector.disable",
  delete: "connector.delete",
  connect: "connector.connect",
  test: "connector.test",
  rotateSecret: "connector.secret.rotate",
  retry: "connector.delivery.retry",
} as const;

export type Actor = AuditActor;

/** A connector as every read shows it: never a credential, only which fields are stored. */
export type Connector = {
  id: string;
  provider: Provider;
  kind: ProviderKind;
  name: string;
  events: string[];
  config: Record<string, unknown>;
  enabled: boolean;
  /** Credentials are stored (OAuth: connected). Their values are never returned. */
  hasCredentials: boolean;
  /** The names of the stored credential fields (e.g. ["appId", "privateKey"], ["signingSecret"], ["accessToken", "refreshToken"]). */
  credentialFields: string[];
  createdAt: string;
  updatedAt: string;
};

export type ConnectorDetail = Connector & { deliveries: Record<DeliveryStatus, number> };

export type Attempt = { attempt: number; at: string; status: number | null; error: string | null; durationMs: number; response: string | null };

export type Delivery = {
  id: string;
  connectorId: string;
  eventId: string;
  eventType: string;
  test: boolean;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  data: Record<string, unknown>;
  log: Attempt[];
};

type CredentialInput = Partial<Record<CredentialField, unknown>>;
export type CreateInput = CredentialInput & { provider: string; name?: string; events?: string[]; config?: Record<string, unknown> };
export type PatchInput = CredentialInput & { name?: string; events?: string[]; config?: Record<string, unknown>; enabled?: boolean };
export type Created = { id: string; secret?: string };

/** Who started an OAuth flow: the dashboard session and its person, or a person's device-flow token (no session), or an admin key (neither). */
export type OAuthBinding = { sessionId: string | null; userId: string | null };
/** The signed-in browser session the vendor's redirect came back in. */
export type OAuthBrowser = { sessionId: string; userId: string | null; administers(projectId: string): Promise<boolean> };

export function lockScope(projectId: string): string {
  return `connectors:${projectId}`;
}

function checkName(name: string): string {
  if (typeof name !== "string" || name.trim().length === 0 || name.length > NAME_MAX) {
    throw validation(`name must be 1 to ${NAME_MAX} characters`, `name: ${typeof name === "string" ? name.length : 0} characters; allowed 1 to ${NAME_MAX}`);
  }
  checkNameChars("name", name);
  return name.trim();
}

/** Event types a connector subscribes to: each one of OUTBOX_EVENT_TYPES, duplicates dropped, order kept. */
export function checkEvents(events: unknown): string[] {
  if (!Array.isArray(events)) throw validation("events must be an array of event types", "events: expected an array");
  const out: string[] = [];
  events.forEach((e, i) => {
    if (typeof e !== "string" || !(OUTBOX_EVENT_TYPES as readonly string[]).includes(e)) {
      throw validation(`Unknown event type ${JSON.stringify(e)}`, `events[${i}]: one of ${OUTBOX_EVENT_TYPES.join(", ")}`);
    }
    if (!out.includes(e)) out.push(e);
  });
  return out;
}

const parse = <T>(text: string, fallback: T): T => {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

function toConnector(r: ConnectorRow): Connector {
  const fields = parse<string[]>(r.credential_fields, []);
  return {
    id: r.id,
    provider: r.provider as Provider,
    kind: PROVIDER_SPECS[r.provider as Provider]?.kind ?? "webhook",
    name: r.name,
    events: parse<string[]>(r.events, []),
    config: parse<Record<string, unknown>>(r.config, {}),
    enabled: Number(r.enabled) === 1,
    hasCredentials: r.credentials !== null,
    credentialFields: fields,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * A webhook's URL as people other than admins see it: scheme and host, the
 * path and query (where receivers keep their secret) hidden.
 */
export function maskUrl(raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}/****`;
  } catch {
    return "****";
  }
}

function maskedConfig(provider: string, config: Record<string, unknown>): Record<string, unknown> {
  return provider === "webhook" && "url" in config ? { ...config, url: maskUrl(config.url) } : config;
}

/** What one reader may see of a connector: admins (owners, admin keys) all of it; everyone else a masked webhook URL. */
function shownTo<T extends Connector>(c: T, admin: boolean): T {
  return admin ? c : { ...c, config: maskedConfig(c.provider, c.config) };
}

/** A delivery as a reader other than an admin sees it: not the vendor's answer (what a private target said stays with admins). */
function deliveryShownTo(d: Delivery, admin: boolean): Delivery {
  return admin ? d : { ...d, log: d.log.map((a) => ({ ...a, response: null })) };
}

export function toDelivery(r: DeliveryRow, attempts: AttemptRow[]): Delivery {
  return {
    id: r.id,
    connectorId: r.connector_id,
    eventId: r.event_id,
    eventType: r.event_type,
    test: Number(r.test) === 1,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: r.status === "pending" ? new Date(Number(r.next_attempt_at)).toISOString() : null,
    lastStatus: r.last_status === null ? null : Number(r.last_status),
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deliveredAt: r.delivered_at,
    data: parse<Record<string, unknown>>(r.payload, {}),
    log: attempts
      .filter((a) => a.delivery_id === r.id)
      .map((a) => ({ attempt: Number(a.attempt), at: a.at, status: a.status === null ? null : Number(a.status), error: a.error, durationMs: Number(a.duration_ms), response: a.response })),
  };
}

const notConnector = (id: string) => notFound(`Connector ${id} not found`);

/** The facts of a connector an audit row keeps (never a credential value). */
const auditFacts = (c: Connector) => ({ provider: c.provider, name: c.name, events: c.events, config: maskedConfig(c.provider, c.config), enabled: c.enabled, credentialFields: c.credentialFields });

/**
 * Connectors: where a project's events go (OAuth apps, agent triggers,
 * webhooks), their credentials sealed at rest, and the drainer that delivers
 * the outbox to them with retries (drainer.ts). Every write is one
 * transaction under the project's connectors lock with its audit row.
 */
export class ConnectorsService {
  readonly options: ResolvedConnectorOptions;
  readonly box: SecretBox;
  readonly drainer: Drainer;
  private readonly refreshing = new Map<string, Promise<OAuthTokens>>();
  private keyFileWarned = false;

  constructor(private readonly ctx: ServiceContext) {
    const dataDir = ctx.options.outboxPath ? ctx.options.outboxPath.replace(/[\\/][^\\/]*$/, "") : undefined;
    this.options = resolveConnectorOptions(connectorOptionsFromEnv(process.env), ctx.options.connectors, dataDir);
    this.box = SecretBox.open(this.options);
    this.drainer = new Drainer(ctx, this.options, {
      open: (row) => this.sendTarget(row),
      oauthToken: (target) => this.oauthToken(target),
    });
    if (this.options.drain && !ctx.options.edgeOnly) this.drainer.start();
  }

  /**
   * Said once, when a secret is first sealed (not at every start, where most
   * installs have no connector yet): on PostgreSQL several servers share the
   * rows, and a key file is this server's alone.
   */
  private warnIfKeyFileOnPostgres(): void {
    if (this.keyFileWarned || this.box.source !== "file" || this.ctx.store.engine !== "postgres") return;
    this.keyFileWarned = true;
    this.ctx.log.warn("connector credentials are sealed with this server's own key file; servers sharing this PostgreSQL must share one key: set SERVICE_SECRET_KEY on each", { keyFile: this.box.path, keyId: this.box.keyId });
  }

  /** `admin`: the reader may see webhook URLs whole (owners, admin keys); everyone else sees them masked (the default). */
  async list(projectId: string, q?: string, admin = false): Promise<Connector[]> {
    const rows = (await connectorsOfProject(this.ctx.store, projectId)).map(toConnector);
    return filterByQuery(rows, q, (c) => [c.name, c.provider]).map((c) => shownTo(c, admin));
  }

  async get(projectId: string, id: string, admin = false): Promise<ConnectorDetail> {
    const row = await this.find(this.ctx.store, projectId, id);
    return shownTo({ ...toConnector(row), deliveries: await deliveryCounts(this.ctx.store, row.id) }, admin);
  }

  /**
   * A webhook's URL as a target: VALIDATION when it names or resolves to a
   * private, loopback, link-local … address or a metadata name (lib/outgoing.ts).
   * A name that does not resolve now is taken: the delivery checks it again.
   */
  private async checkWebhookUrl(url: unknown): Promise<void> {
    if (typeof url !== "string") return;
    try {
      await checkTarget(url.trim(), { allowPrivate: this.options.allowPrivateTargets }, { mustResolve: false });
    } catch (err) {
      if (err instanceof TargetRefused) throw validation("config.url is not an allowed target", `config.url: ${err.message}`);
      throw err;
    }
  }

  /**
   * Creates a connector (answers `{id}`, 201), or for a trigger whose natural
   * key exists already, updates that row and answers its id (`created`
   * false, 200). A webhook's answer carries its signing secret, once.
   */
  async create(projectId: string, input: CreateInput, actor: Actor): Promise<Created & { created: boolean }> {
    if (typeof input.provider !== "string" || !isProvider(input.provider)) {
      throw validation("Unknown provider", `provider: one of ${Object.keys(PROVIDER_SPECS).join(", ")}`);
    }
    const spec = PROVIDER_SPECS[input.provider];
    const sentCredentials = checkCredentials(spec, input);
    const name = input.name === undefined ? undefined : checkName(input.name);
    const events = input.events === undefined ? undefined : checkEvents(input.events);
    if (spec.kind === "oauth") {
      if (input.config !== undefined && Object.keys(input.config).length > 0) {
        throw validation(`A ${spec.provider} connector is created with an empty config`, `config: set it after connecting, with PATCH /api/admin/connectors/{id} (settings: ${spec.config.map((f) => f.name).join(", ")})`);
      }
    }
    if (spec.kind !== "trigger") {
      if (name === undefined) throw validation("name is required", `name: required for provider ${spec.provider}`);
      if (events === undefined) throw validation("events is required", `events: the event types this connector hears, of ${OUTBOX_EVENT_TYPES.join(", ")}`);
    }
    const config = spec.kind === "oauth" ? {} : checkConfig(spec, input.config ?? {});
    if (spec.kind === "webhook") await this.checkWebhookUrl(config.url);
    const missing = missingConfig(spec, config);
    if (missing.length > 0) throw validation(`config.${missing[0]} is required for provider ${spec.provider}`, missing.map((f) => `config.${f}: ${spec.config.find((c) => c.name === f)!.help}`).join("; "));
    if (spec.kind === "trigger") checkCredentialSet(spec, sentCredentials);
    const naturalKey = spec.naturalKey?.(config) ?? null;
    const secret = spec.kind === "webhook" ? newSigningSecret() : undefined;
    const credentials: Credentials = secret ? { signingSecret: secret } : sentCredentials;

    const attempt = () =>
      this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        const now = nowIso();
        const existing = naturalKey === null ? undefined : await connectorByNaturalKey(tx, projectId, spec.provider, naturalKey);
        if (existing) {
          const before = toConnector(existing);
          const next: ConnectorRow = {
            ...existing,
            name: name ?? existing.name,
            events: events === undefined ? existing.events : JSON.stringify(events),
            config: JSON.stringify(config),
            ...this.sealed(existing.id, credentials),
            updated_at: now,
          };
          await updateConnector(tx, next);
          await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: existing.id, subjectName: next.name, actor, detail: { recreated: true, before: auditFacts(before), after: auditFacts(toConnector(next)) } });
          return { id: existing.id, created: false };
        }
        const id = newUuid();
        const row: ConnectorRow = {
          id,
          project_id: projectId,
          provider: spec.provider,
          name: name ?? defaultName(spec.provider, naturalKey),
          events: JSON.stringify(events ?? ["bug.created"]),
          config: JSON.stringify(config),
          enabled: spec.kind === "oauth" ? 0 : 1,
          natural_key: naturalKey,
          ...this.sealed(id, spec.kind === "oauth" ? {} : credentials),
          created_at: now,
          updated_at: now,
        };
        await insertConnector(tx, row);
        await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: id, subjectName: row.name, actor, detail: auditFacts(toConnector(row)) });
        return { id, created: true, ...(secret ? { secret } : {}) };
      });
    try {
      return await attempt();
    } catch (err) {
      // Another server created the same trigger between our lock-free moments (the lock covers one store): take its row.
      if (naturalKey !== null && this.ctx.store.isUniqueViolation(err)) return attempt();
      throw err;
    }
  }

  /**
   * A partial update: `name`, `events` (replaces the list), `config` (merged
   * into the stored one: a field sent replaces it, null removes an optional
   * one), `enabled`, and the provider's credential fields (merged likewise).
   * A trigger's natural key may not become another connector's (409).
   */
  async update(projectId: string, id: string, patch: PatchInput, actor: Actor): Promise<Connector> {
    const name = patch.name === undefined ? undefined : checkName(patch.name);
    const events = patch.events === undefined ? undefined : checkEvents(patch.events);
    // A webhook's new target is resolved and checked before the transaction (a lookup cannot wait inside it); a
    // connector's provider never changes, so the read outside it decides whether there is a target to check.
    if (patch.config?.url !== undefined && (await this.find(this.ctx.store, projectId, id)).provider === "webhook") await this.checkWebhookUrl(patch.config.url);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, id);
      const spec = PROVIDER_SPECS[row.provider as Provider];
      const sent = checkCredentials(spec, patch);
      const before = toConnector(row);
      const next: ConnectorRow = { ...row };
      const fields: string[] = [];
      if (name !== undefined && name !== row.name) {
        next.name = name;
        fields.push("name");
      }
      if (events !== undefined && JSON.stringify(events) !== row.events) {
        next.events = JSON.stringify(events);
        fields.push("events");
      }
      if (patch.config !== undefined) {
        const given = checkConfig(spec, Object.fromEntries(Object.entries(patch.config).filter(([, v]) => v !== null)));
        const merged: Record<string, unknown> = { ...before.config, ...given };
        for (const [key, value] of Object.entries(patch.config)) {
          if (value !== null) continue;
          if (spec.config.find((f) => f.name === key)?.required) throw validation(`config.${key} cannot be removed`, `config.${key}: required for provider ${spec.provider}`);
          if (!spec.config.some((f) => f.name === key)) checkConfig(spec, { [key]: value });
          delete merged[key];
        }
        const missing = missingConfig(spec, merged);
        if (missing.length > 0) throw validation(`config.${missing[0]} is required`, `config.${missing[0]}: required for provider ${spec.provider}`);
        if (JSON.stringify(merged) !== row.config) {
          next.config = JSON.stringify(merged);
          fields.push("config");
          if (spec.naturalKey) {
            next.natural_key = spec.naturalKey(merged);
            const other = await connectorByNaturalKey(tx, projectId, spec.provider, next.natural_key);
            if (other && other.id !== row.id) {
              throw alreadyExists(`Another ${spec.provider} connector already targets ${next.natural_key}`, `config: connector ${other.id} has that ${spec.provider} target; update or delete it instead`);
            }
          }
        }
      }
      if (Object.keys(sent).length > 0) {
        const current = row.credentials === null ? {} : this.openCredentials(row);
        const merged = { ...current, ...sent };
        checkCredentialSet(spec, merged);
        Object.assign(next, this.sealed(row.id, merged));
        fields.push("credentials");
      }
      if (patch.enabled !== undefined && patch.enabled !== before.enabled) {
        if (patch.enabled) this.checkEnableable(row);
        next.enabled = patch.enabled ? 1 : 0;
        fields.push("enabled");
      }
      if (fields.length === 0) return before;
      next.updated_at = nowIso();
      await updateConnector(tx, next);
      const after = toConnector(next);
      await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: row.id, subjectName: next.name, actor, detail: { fields, before: auditFacts(before), after: auditFacts(after) } });
      return after;
    });
  }

  async setEnabled(projectId: string, id: string, enabled: boolean, actor: Actor): Promise<Connector> {
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, id);
      if (Number(row.enabled) === (enabled ? 1 : 0)) return toConnector(row);
      if (enabled) this.checkEnableable(row);
      const next = { ...row, enabled: enabled ? 1 : 0, updated_at: nowIso() };
      await updateConnector(tx, next);
      await recordAudit(tx, { projectId, action: enabled ? ACTIONS.enable : ACTIONS.disable, subjectId: row.id, subjectName: row.name, actor, detail: { provider: row.provider } });
      if (enabled) tx.announce(OUTBOX_CHANNEL, row.id);
      return toConnector(next);
    });
  }

  /** Deletes the connector with its delivery log (pending deliveries are dropped). */
  /**
   * For a body that names a connector by id (an alert rule's
   * `notify.connectorId`), in the caller's transaction: takes the lock
   * connector deletes take, so the connector stays until that transaction
   * commits, and answers whether the project has it.
   */
  async lockReference(tx: Tx, projectId: string, id: string): Promise<boolean> {
    await tx.lock(lockScope(projectId));
    return (await findConnector(tx, projectId, id)) !== undefined;
  }

  /** Deletes a connector no alert rule delivers through (VALIDATION naming the rules otherwise: point them elsewhere first). */
  async remove(projectId: string, id: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, id);
      // Rules name a connector under this lock too (lockReference): none can start using it meanwhile.
      const rules = await this.ctx.services.alerts.rulesNotifying(tx, projectId, row.id);
      if (rules.length > 0) {
        const plural = rules.length > 1 ? "s" : "";
        throw validation(
          `Connector ${row.name} delivers alert rule${plural} ${rules.join(", ")}; point them elsewhere first`,
          `id: named by alert rule${plural} ${rules.join(", ")} (notify.connectorId; PATCH their notify)`,
        );
      }
      const counts = await deliveryCounts(tx, row.id);
      await deleteConnector(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.name, actor, detail: { provider: row.provider, droppedPending: counts.pending } });
    });
  }

  /** A new signing secret for a webhook (the old one stops at once); answered once. */
  async rotateSecret(projectId: string, id: string, actor: Actor): Promise<Created> {
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, id);
      if (row.provider !== "webhook") throw validation("Only a webhook has a signing secret", `id: connector ${row.id} is ${row.provider}`);
      const secret = newSigningSecret();
      await updateConnector(tx, { ...row, ...this.sealed(row.id, { signingSecret: secret }), updated_at: nowIso() });
      await recordAudit(tx, { projectId, action: ACTIONS.rotateSecret, subjectId: row.id, subjectName: row.name, actor });
      return { id: row.id, secret };
    });
  }

  /** The delivery log, newest first. */
  async deliveries(projectId: string, id: string, options: { limit?: number; status?: DeliveryStatus; before?: number } = {}, admin = false): Promise<Delivery[]> {
    const limit = options.limit ?? DELIVERIES_DEFAULT_LIMIT;
    checkLimit(limit, DELIVERIES_MAX_LIMIT);
    const row = await this.find(this.ctx.store, projectId, id);
    const rows = await deliveriesOf(this.ctx.store, row.id, { limit, status: options.status, before: options.before });
    const attempts = await attemptsOf(this.ctx.store, rows.map((r) => r.id));
    return rows.map((r) => deliveryShownTo(toDelivery(r, attempts), admin));
  }

  async delivery(projectId: string, id: string, deliveryId: string, admin = false): Promise<Delivery> {
    const row = await this.find(this.ctx.store, projectId, id);
    const d = await findDelivery(this.ctx.store, row.id, deliveryId);
    if (!d) throw notFound(`Delivery ${deliveryId} not found`);
    return deliveryShownTo(toDelivery(d, await attemptsOf(this.ctx.store, [d.id])), admin);
  }

  /** Makes a delivery due now with a fresh attempt budget (a failed one, or a pending one sooner). */
  async retry(projectId: string, id: string, deliveryId: string, actor: Actor): Promise<Delivery> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, id);
      const d = await findDelivery(tx, row.id, deliveryId);
      if (!d) throw notFound(`Delivery ${deliveryId} not found`);
      if (d.status === "delivered") throw validation("The delivery was delivered already", `deliveryId: ${d.id} is delivered; test-fire instead to send again`);
      await requeueDelivery(tx, d.id, Date.now(), nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.retry, subjectId: row.id, subjectName: row.name, actor, detail: { deliveryId: d.id, eventId: d.event_id, previousStatus: d.status } });
      tx.announce(OUTBOX_CHANNEL, d.id);
    });
    // Retrying is the admin role's: the answer shows the whole delivery.
    return this.delivery(projectId, id, deliveryId, true);
  }

  /**
   * Test-fire: a sample event of `type` (default the connector's first
   * subscribed type) queued for this connector only, through the same
   * drainer, signing and adapter as real events; one attempt (a failure is
   * not retried: send it again with the retry endpoint). Waits up to 10 s for
   * that attempt and answers the delivery (`done` false: not attempted yet).
   */
  async testFire(projectId: string, id: string, input: { type?: string; wait?: boolean }, actor: Actor): Promise<{ done: boolean; delivery: Delivery }> {
    if (input.type !== undefined) checkEvents([input.type]);
    const deliveryId = await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, id);
      const events = parse<string[]>(row.events, []);
      const type = input.type ?? events[0] ?? "bug.created";
      const deliveryId = newId("dlv");
      const now = nowIso();
      await insertDeliveries(tx, [
        {
          id: deliveryId,
          connectorId: row.id,
          projectId,
          eventId: newId("evt"),
          eventType: type,
          payload: JSON.stringify(samplePayload(type)),
          eventCreatedAt: now,
          test: true,
          nextAttemptAt: Date.now(),
          now,
        },
      ]);
      await recordAudit(tx, { projectId, action: ACTIONS.test, subjectId: row.id, subjectName: row.name, actor, detail: { deliveryId, type } });
      tx.announce(OUTBOX_CHANNEL, deliveryId);
      return deliveryId;
    });
    const deadline = Date.now() + (input.wait === false ? 0 : TEST_WAIT_MS);
    for (;;) {
      const d = await this.delivery(projectId, id, deliveryId, true);
      if (d.log.length > 0 && d.status !== "pending") return { done: true, delivery: d };
      if (Date.now() >= deadline || this.ctx.shutdown.aborted) return { done: false, delivery: d };
      await Bun.sleep(25);
    }
  }

  // ---- OAuth

  /** Starts the OAuth flow of an OAuth/app connector: the vendor's authorize URL to send the browser to (state + PKCE, 10 minutes). */
  async oauthStart(projectId: string, id: string, p: { origin: string; returnTo?: string; binding: OAuthBinding }, actor: Actor): Promise<{ url: string; expiresAt: string }> {
    const row = await this.find(this.ctx.store, projectId, id);
    const spec = PROVIDER_SPECS[row.provider as Provider];
    if (spec.kind !== "oauth") throw validation(`A ${row.provider} connector has no OAuth flow`, `id: only ${OAUTH_PROVIDERS.join(", ")} connect through OAuth`);
    const provider = row.provider as OAuthProvider;
    const client = this.options.oauth[provider];
    if (!client) {
      const vendor = OAUTH_ENV[provider];
      throw validation(`OAuth for ${provider} is not configured on this server`, `provider: set SERVICE_${vendor}_CLIENT_ID and SERVICE_${vendor}_CLIENT_SECRET (the OAuth app's client) and restart`);
    }
    if (p.returnTo !== undefined && !/^\/(?!\/)[^\s\\]*$/.test(p.returnTo)) throw validation("returnTo must be a path on this server", "returnTo: a path such as /dashboard/connectors");
    const state = randomBase62(32);
    const verifier = randomBase62(64);
    const stateHash = sha256Hex(state);
    const redirectUri = `${p.origin}${OAUTH_CALLBACK_PATH}`;
    const expiresAt = Date.now() + OAUTH_STATE_TTL_MS;
    await this.ctx.store.write(async (tx) => {
      await tx.run("DELETE FROM connector_oauth_states WHERE expires_at < ?", Date.now());
      await tx.run(
        "INSERT INTO connector_oauth_states (state_hash, connector_id, project_id, verifier, redirect_uri, return_to, actor_email, actor_type, expires_at, session_id, user_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        stateHash,
        row.id,
        projectId,
        (this.warnIfKeyFileOnPostgres(), this.box.seal(verifier, `oauth:${stateHash}`)),
        redirectUri,
        p.returnTo ?? null,
        actor.email,
        actor.type,
        expiresAt,
        p.binding.sessionId,
        p.binding.userId,
      );
    });
    return { url: authorizeUrl(provider, this.options.urls, client, { redirectUri, state, challenge: pkceChallenge(verifier) }), expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The vendor's redirect back: the state (single use, 10 minutes) names the
   * connector and the PKCE verifier; the code is exchanged for tokens, which
   * are sealed onto the connector, and the connector is enabled.
   *
   * Only in the browser that started it: the state is bound to the signed-in
   * session that started the flow (or, started with a device-flow token, to
   * its person; with an admin key, to anyone signed in who administers the
   * project). Otherwise an attacker could start a flow on their own
   * connector and have a victim's browser finish it, putting the victim's
   * vendor account on the attacker's connector: such a callback is refused,
   * its code never exchanged, nothing stored.
   */
  async oauthCallback(p: { state?: string; code?: string; error?: string }, browser: OAuthBrowser | null): Promise<{ connectorId: string | null; returnTo: string | null; error: string | null }> {
    if (!p.state) return { connectorId: null, returnTo: null, error: "The authorization answer has no state; start again from the dashboard" };
    const stateHash = sha256Hex(p.state);
    const pending = await this.ctx.store.write(async (tx) => {
      const row = await tx.one<{
        connector_id: string;
        project_id: string;
        verifier: string;
        redirect_uri: string;
        return_to: string | null;
        actor_email: string;
        actor_type: string;
        expires_at: number | string;
        session_id: string | null;
        user_id: string | null;
      }>("SELECT connector_id, project_id, verifier, redirect_uri, return_to, actor_email, actor_type, expires_at, session_id, user_id FROM connector_oauth_states WHERE state_hash = ?", stateHash);
      if (row) await tx.run("DELETE FROM connector_oauth_states WHERE state_hash = ?", stateHash);
      return row;
    });
    if (!pending || Number(pending.expires_at) < Date.now()) return { connectorId: null, returnTo: null, error: "This authorization link is unknown, used or expired; start again from the dashboard" };
    if (!browser) {
      return { connectorId: null, returnTo: null, error: "Connecting must finish in the browser, signed in to svc, that started it. Nothing was stored: sign in and start connecting again from the dashboard" };
    }
    const same = pending.session_id !== null ? browser.sessionId === pending.session_id : pending.user_id !== null ? browser.userId === pending.user_id : await browser.administers(pending.project_id);
    if (!same) {
      this.ctx.log.warn("connector OAuth callback from another session refused", { connectorId: pending.connector_id });
      return { connectorId: null, returnTo: null, error: "This authorization was started by someone else or in another browser session. Nothing was stored: start connecting again from the dashboard yourself" };
    }
    const back = { connectorId: pending.connector_id, returnTo: pending.return_to };
    if (p.error || !p.code) return { ...back, error: `The provider refused the authorization: ${(p.error ?? "no code").slice(0, 100)}` };
    const connector = await connectorById(this.ctx.store, pending.connector_id);
    if (!connector) return { ...back, error: "The connector was deleted meanwhile" };
    const provider = connector.provider as OAuthProvider;
    const client = this.options.oauth[provider];
    if (!client) return { ...back, error: `OAuth for ${provider} is not configured on this server` };
    let tokens: OAuthTokens;
    try {
      const verifier = this.box.open(pending.verifier, `oauth:${stateHash}`);
      tokens = await exchangeCode(provider, this.options.urls, client, { code: p.code, redirectUri: pending.redirect_uri, verifier }, (url, init) => this.fetch(url, init));
    } catch (err) {
      this.ctx.log.warn("connector OAuth code exchange failed", { connectorId: connector.id, provider, error: String(err) });
      return { ...back, error: err instanceof OAuthError ? err.message : "The code could not be exchanged for a token" };
    }
    const actor = { email: pending.actor_email, type: pending.actor_type };
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(pending.project_id));
      const row = await connectorById(tx, connector.id);
      if (!row) return;
      await updateConnector(tx, { ...row, ...this.sealed(row.id, tokens as unknown as Credentials), enabled: 1, updated_at: nowIso() });
      await recordAudit(tx, { projectId: pending.project_id, action: ACTIONS.connect, subjectId: row.id, subjectName: row.name, actor, detail: { provider, scope: tokens.scope ?? null, expiresAt: tokens.expiresAt ? new Date(tokens.expiresAt).toISOString() : null } });
      tx.announce(OUTBOX_CHANNEL, row.id);
    });
    return { ...back, error: null };
  }

  // ---- What the drainer uses

  /** A connector ready to send with: config and opened credentials (a credential problem is thrown, as the delivery's error). */
  private sendTarget(row: Pick<ConnectorRow, "id" | "provider" | "config" | "credentials">): SendTarget {
    return {
      id: row.id,
      provider: row.provider as Provider,
      config: parse<Record<string, unknown>>(row.config, {}),
      credentials: row.credentials === null ? {} : this.openCredentials(row),
    };
  }

  /** The OAuth access token to send with, refreshed (once per connector at a time) when it expires within a minute. */
  private async oauthToken(target: SendTarget): Promise<string> {
    const tokens = target.credentials as unknown as OAuthTokens;
    if (typeof tokens.accessToken !== "string") throw new OAuthError(`${target.provider} is not connected: run its OAuth flow (POST /api/admin/connectors/${target.id}/oauth/start)`);
    if (tokens.expiresAt === undefined || Number(tokens.expiresAt) - Date.now() > 60_000) return tokens.accessToken;
    let running = this.refreshing.get(target.id);
    if (!running) {
      running = this.refresh(target, tokens).finally(() => this.refreshing.delete(target.id));
      this.refreshing.set(target.id, running);
    }
    const fresh = await running;
    target.credentials = fresh as unknown as Credentials;
    return fresh.accessToken;
  }

  private async refresh(target: SendTarget, tokens: OAuthTokens): Promise<OAuthTokens> {
    const provider = target.provider as OAuthProvider;
    const client = this.options.oauth[provider];
    if (!client) throw new OAuthError(`OAuth for ${provider} is not configured on this server: cannot refresh the token`);
    const fresh = await refreshTokens(provider, this.options.urls, client, tokens, (url, init) => this.fetch(url, init));
    await this.ctx.store.write(async (tx) => {
      const row = await connectorById(tx, target.id);
      if (row) await updateConnector(tx, { ...row, ...this.sealed(row.id, fresh as unknown as Credentials), updated_at: nowIso() });
    });
    return fresh;
  }

  /** The OAuth token calls go to the operator's vendor URLs: no target check, but the same answer cap and no redirects. */
  private fetch(url: string, init: RequestInit): Promise<Response> {
    return outgoingFetch(url, init, { timeoutMs: this.options.sendTimeoutMs });
  }

  // ---- Helpers

  private openCredentials(row: Pick<ConnectorRow, "id" | "credentials">): Credentials {
    return this.box.openJson<Credentials>(row.credentials!, row.id);
  }

  /** The credentials columns for a connector: sealed JSON and the field names (null when there are none). */
  private sealed(connectorId: string, credentials: Credentials): Pick<ConnectorRow, "credentials" | "credential_fields"> {
    const present = Object.fromEntries(Object.entries(credentials).filter(([, v]) => v !== undefined));
    const fields = Object.keys(present).filter((k) => k !== "expiresAt" && k !== "scope");
    if (fields.length === 0) return { credentials: null, credential_fields: "[]" };
    this.warnIfKeyFileOnPostgres();
    return { credentials: this.box.sealJson(present, connectorId), credential_fields: JSON.stringify(fields) };
  }

  private checkEnableable(row: ConnectorRow): void {
    const spec = PROVIDER_SPECS[row.provider as Provider];
    if (spec.kind === "oauth" && row.credentials === null) {
      throw validation(`Connect the ${row.provider} connector before enabling it`, `enabled: no credentials yet; run its OAuth flow (POST /api/admin/connectors/${row.id}/oauth/start)`);
    }
  }

  /** By id, else by name when exactly one connector of the project has it. */
  private async find(q: Queryable, projectId: string, idOrName: string): Promise<ConnectorRow> {
    const row = await findConnector(q, projectId, idOrName);
    if (row) return row;
    const named = await connectorsNamed(q, projectId, idOrName);
    if (named.length === 1) return named[0]!;
    if (named.length > 1) throw notFound(`Several connectors are named ${idOrName}`, "id: use the connector's id (svc connectors list shows it)");
    throw notConnector(idOrName);
  }

  close(): Promise<void> {
    return this.drainer.close();
  }

  /** Test hook: runs one fan-out and one send round now on this server. */
  drainNow(): Promise<void> {
    return this.drainer.drainOnce();
  }
}

function defaultName(provider: Provider, naturalKey: string | null): string {
  const label = provider.replace(/_trigger$/, "");
  return `${label} ${naturalKey ?? ""}`.trim().slice(0, NAME_MAX);
}
