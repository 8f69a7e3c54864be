import type { AuditActor } from "../../lib/audit";
import { notFound, validation } from "../../lib/errors";
import { OUTBOX_EVENT_TYPES } from "../../lib/outbox";
import { checkNameChars } from "../../lib/validate";
import { type CredentialField, PROVIDER_SPECS, type Provider, type ProviderKind } from "./providers";
import type { AttemptRow, ConnectorRow, DeliveryRow, DeliveryStatus } from "./store";

// The connectors module's own types, limits and row mappings: shared by the service and its flows
// (oauth-flow.ts, delivery-flow.ts), which import them from here rather than from service.ts.
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

export function checkName(name: string): string {
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

export const parse = <T>(text: string, fallback: T): T => {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

export function toConnector(r: ConnectorRow): Connector {
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

export function maskedConfig(provider: string, config: Record<string, unknown>): Record<string, unknown> {
  return provider === "webhook" && "url" in config ? { ...config, url: maskUrl(config.url) } : config;
}

/** What one reader may see of a connector: admins (owners, admin keys) all of it; everyone else a masked webhook URL. */
export function shownTo<T extends Connector>(c: T, admin: boolean): T {
  return admin ? c : { ...c, config: maskedConfig(c.provider, c.config) };
}

/** A delivery as a reader other than an admin sees it: not the vendor's answer (what a private target said stays with admins). */
export function deliveryShownTo(d: Delivery, admin: boolean): Delivery {
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

export const notConnector = (id: string) => notFound(`Connector ${id} not found`);

/** The facts of a connector an audit row keeps (never a credential value). */
export const auditFacts = (c: Connector) => ({ provider: c.provider, name: c.name, events: c.events, config: maskedConfig(c.provider, c.config), enabled: c.enabled, credentialFields: c.credentialFields });

export function defaultName(provider: Provider, naturalKey: string | null): string {
  const label = provider.replace(/_trigger$/, "");
  return `${label} ${naturalKey ?? ""}`.trim().slice(0, NAME_MAX);
}
