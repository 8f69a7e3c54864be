import { recordAudit } from "../../lib/audit";
import { alreadyExists, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newUuid, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { OUTBOX_CHANNEL, OUTBOX_EVENT_TYPES } from "../../lib/outbox";
import type { Tx } from "../../lib/store";
import type { SendTarget } from "./adapters";
import { ConnectorsCore } from "./core";
import { ConnectorsDeliveryFlow } from "./delivery-flow";
import { Drainer } from "./drainer";
import { ConnectorsOAuthFlow } from "./oauth-flow";
import type { ResolvedConnectorOptions } from "./options";
import { type Credentials, PROVIDER_SPECS, type Provider, checkConfig, checkCredentialSet, checkCredentials, isProvider, missingConfig } from "./providers";
import type { SecretBox } from "./secrets";
import { newSigningSecret } from "./signing";
import { type ConnectorRow, type DeliveryStatus, connectorByNaturalKey, connectorsOfProject, deleteConnector, deliveryCounts, findConnector, insertConnector, updateConnector } from "./store";
import {
  ACTIONS,
  type Actor,
  type Connector,
  type ConnectorDetail,
  type CreateInput,
  type Created,
  type Delivery,
  type OAuthBinding,
  type OAuthBrowser,
  type PatchInput,
  auditFacts,
  checkEvents,
  checkName,
  defaultName,
  lockScope,
  parse,
  shownTo,
  toConnector,
} from "./types";

// The module's types and limits live in types.ts; said again here for the callers that import them from the service.
export * from "./types";

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
  private readonly core: ConnectorsCore;
  private readonly oauth: ConnectorsOAuthFlow;
  private readonly deliveryFlow: ConnectorsDeliveryFlow;

  constructor(private readonly ctx: ServiceContext) {
    this.core = new ConnectorsCore(ctx);
    this.options = this.core.options;
    this.box = this.core.box;
    this.oauth = new ConnectorsOAuthFlow(this.core);
    this.deliveryFlow = new ConnectorsDeliveryFlow(this.core);
    this.drainer = new Drainer(ctx, this.options, {
      open: (row) => this.sendTarget(row),
      oauthToken: (target) => this.oauth.token(target),
    });
    if (this.options.drain && !ctx.options.edgeOnly) this.drainer.start();
  }

  /** `admin`: the reader may see webhook URLs whole (owners, admin keys); everyone else sees them masked (the default). */
  async list(projectId: string, q?: string, admin = false): Promise<Connector[]> {
    const rows = (await connectorsOfProject(this.ctx.store, projectId)).map(toConnector);
    return filterByQuery(rows, q, (c) => [c.name, c.provider]).map((c) => shownTo(c, admin));
  }

  async get(projectId: string, id: string, admin = false): Promise<ConnectorDetail> {
    const row = await this.core.find(this.ctx.store, projectId, id);
    return shownTo({ ...toConnector(row), deliveries: await deliveryCounts(this.ctx.store, row.id) }, admin);
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
    if (spec.kind === "webhook") await this.core.checkWebhookUrl(config.url);
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
            ...this.core.sealed(existing.id, credentials),
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
          ...this.core.sealed(id, spec.kind === "oauth" ? {} : credentials),
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
    if (patch.config?.url !== undefined && (await this.core.find(this.ctx.store, projectId, id)).provider === "webhook") await this.core.checkWebhookUrl(patch.config.url);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.core.find(tx, projectId, id);
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
        const current = row.credentials === null ? {} : this.core.openCredentials(row);
        const merged = { ...current, ...sent };
        checkCredentialSet(spec, merged);
        Object.assign(next, this.core.sealed(row.id, merged));
        fields.push("credentials");
      }
      if (patch.enabled !== undefined && patch.enabled !== before.enabled) {
        if (patch.enabled) this.core.checkEnableable(row);
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
      const row = await this.core.find(tx, projectId, id);
      if (Number(row.enabled) === (enabled ? 1 : 0)) return toConnector(row);
      if (enabled) this.core.checkEnableable(row);
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
      const row = await this.core.find(tx, projectId, id);
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
      const row = await this.core.find(tx, projectId, id);
      if (row.provider !== "webhook") throw validation("Only a webhook has a signing secret", `id: connector ${row.id} is ${row.provider}`);
      const secret = newSigningSecret();
      await updateConnector(tx, { ...row, ...this.core.sealed(row.id, { signingSecret: secret }), updated_at: nowIso() });
      await recordAudit(tx, { projectId, action: ACTIONS.rotateSecret, subjectId: row.id, subjectName: row.name, actor });
      return { id: row.id, secret };
    });
  }

  // ---- Deliveries (delivery-flow.ts)

  /** The delivery log, newest first. */
  deliveries(projectId: string, id: string, options: { limit?: number; status?: DeliveryStatus; before?: number } = {}, admin = false): Promise<Delivery[]> {
    return this.deliveryFlow.deliveries(projectId, id, options, admin);
  }

  delivery(projectId: string, id: string, deliveryId: string, admin = false): Promise<Delivery> {
    return this.deliveryFlow.delivery(projectId, id, deliveryId, admin);
  }

  /** Makes a delivery due now with a fresh attempt budget (a failed one, or a pending one sooner). */
  retry(projectId: string, id: string, deliveryId: string, actor: Actor): Promise<Delivery> {
    return this.deliveryFlow.retry(projectId, id, deliveryId, actor);
  }

  /** Test-fire: a sample event queued for this connector only (delivery-flow.ts says how). */
  testFire(projectId: string, id: string, input: { type?: string; wait?: boolean }, actor: Actor): Promise<{ done: boolean; delivery: Delivery }> {
    return this.deliveryFlow.testFire(projectId, id, input, actor);
  }

  // ---- OAuth (oauth-flow.ts)

  /** Starts the OAuth flow of an OAuth/app connector: the vendor's authorize URL to send the browser to (state + PKCE, 10 minutes). */
  oauthStart(projectId: string, id: string, p: { origin: string; returnTo?: string; binding: OAuthBinding }, actor: Actor): Promise<{ url: string; expiresAt: string }> {
    return this.oauth.start(projectId, id, p, actor);
  }

  /** The vendor's redirect back, completed only in the browser session that started it (oauth-flow.ts says why). */
  oauthCallback(p: { state?: string; code?: string; error?: string }, browser: OAuthBrowser | null): Promise<{ connectorId: string | null; returnTo: string | null; error: string | null }> {
    return this.oauth.callback(p, browser);
  }

  // ---- What the drainer uses

  /** A connector ready to send with: config and opened credentials (a credential problem is thrown, as the delivery's error). */
  private sendTarget(row: Pick<ConnectorRow, "id" | "provider" | "config" | "credentials">): SendTarget {
    return {
      id: row.id,
      provider: row.provider as Provider,
      config: parse<Record<string, unknown>>(row.config, {}),
      credentials: row.credentials === null ? {} : this.core.openCredentials(row),
    };
  }

  close(): Promise<void> {
    return this.drainer.close();
  }

  /** Test hook: runs one fan-out and one send round now on this server. */
  drainNow(): Promise<void> {
    return this.drainer.drainOnce();
  }
}
