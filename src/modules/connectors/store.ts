import type { Engine, Queryable } from "../../lib/store";

// The connectors module's own queries (both engines).

export type ConnectorRow = {
  id: string;
  project_id: string;
  provider: string;
  name: string;
  /** JSON array of event types. */
  events: string;
  /** JSON object. */
  config: string;
  enabled: number;
  natural_key: string | null;
  /** Sealed JSON (secrets.ts), or null. */
  credentials: string | null;
  /** JSON array of the names of the stored credential fields. */
  credential_fields: string;
  created_at: string;
  updated_at: string;
};

const COLUMNS = "id, project_id, provider, name, events, config, enabled, natural_key, credentials, credential_fields, created_at, updated_at";

export async function connectorsOfProject(q: Queryable, projectId: string): Promise<ConnectorRow[]> {
  return q.all<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE project_id = ? ORDER BY created_at, id`, projectId);
}

export async function findConnector(q: Queryable, projectId: string, id: string): Promise<ConnectorRow | undefined> {
  return q.one<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE id = ? AND project_id = ?`, id, projectId);
}

/** Connectors of the project with this exact name (names are not unique: the caller decides what several mean). */
export async function connectorsNamed(q: Queryable, projectId: string, name: string): Promise<ConnectorRow[]> {
  return q.all<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE project_id = ? AND name = ? LIMIT 2`, projectId, name);
}

export async function connectorById(q: Queryable, id: string): Promise<ConnectorRow | undefined> {
  return q.one<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE id = ?`, id);
}

export async function connectorByNaturalKey(q: Queryable, projectId: string, provider: string, key: string): Promise<ConnectorRow | undefined> {
  return q.one<ConnectorRow>(`SELECT ${COLUMNS} FROM connectors WHERE project_id = ? AND provider = ? AND natural_key = ?`, projectId, provider, key);
}

export async function insertConnector(q: Queryable, r: ConnectorRow): Promise<void> {
  await q.run(
    `INSERT INTO connectors (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    r.id,
    r.project_id,
    r.provider,
    r.name,
    r.events,
    r.config,
    r.enabled,
    r.natural_key,
    r.credentials,
    r.credential_fields,
    r.created_at,
    r.updated_at,
  );
}

export async function updateConnector(q: Queryable, r: ConnectorRow): Promise<void> {
  await q.run(
    "UPDATE connectors SET name = ?, events = ?, config = ?, enabled = ?, natural_key = ?, credentials = ?, credential_fields = ?, updated_at = ? WHERE id = ?",
    r.name,
    r.events,
    r.config,
    r.enabled,
    r.natural_key,
    r.credentials,
    r.credential_fields,
    r.updated_at,
    r.id,
  );
}

export async function deleteConnector(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM connectors WHERE id = ?", id);
}

/** `?, ?, ?` for n parameters. */
export const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** The enabled connectors of some projects (fan-out). */
export async function enabledConnectorsOf(q: Queryable, projectIds: string[]): Promise<Pick<ConnectorRow, "id" | "project_id" | "events">[]> {
  if (projectIds.length === 0) return [];
  return q.all(`SELECT id, project_id, events FROM connectors WHERE enabled = 1 AND project_id IN (${placeholders(projectIds.length)})`, ...projectIds);
}

// ---- Deliveries

export type DeliveryStatus = "pending" | "delivered" | "failed";

export type DeliveryRow = {
  seq: number | string;
  id: string;
  connector_id: string;
  project_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  event_created_at: string;
  test: number;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | string;
  claimed_until: number | string;
  claimed_by: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
};

const DELIVERY_COLUMNS =
  "seq, id, connector_id, project_id, event_id, event_type, payload, event_created_at, test, status, attempts, next_attempt_at, claimed_until, claimed_by, last_status, last_error, created_at, updated_at, delivered_at";

export type NewDelivery = {
  id: string;
  connectorId: string;
  projectId: string;
  eventId: string;
  eventType: string;
  payload: string;
  eventCreatedAt: string;
  test: boolean;
  nextAttemptAt: number;
  now: string;
};

export async function deliveriesOf(q: Queryable, connectorId: string, options: { limit: number; status?: DeliveryStatus; before?: number }): Promise<DeliveryRow[]> {
  const where = ["connector_id = ?"];
  const params: (string | number)[] = [connectorId];
  if (options.status) {
    where.push("status = ?");
    params.push(options.status);
  }
  if (options.before !== undefined) {
    where.push("seq < ?");
    params.push(options.before);
  }
  return q.all<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM connector_deliveries WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`, ...params, options.limit);
}

export async function findDelivery(q: Queryable, connectorId: string, id: string): Promise<DeliveryRow | undefined> {
  return q.one<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM connector_deliveries WHERE id = ? AND connector_id = ?`, id, connectorId);
}

export async function deliveryCounts(q: Queryable, connectorId: string): Promise<Record<DeliveryStatus, number>> {
  const rows = await q.all<{ status: DeliveryStatus; n: number | string }>(
    "SELECT status, CAST(COUNT(*) AS INTEGER) AS n FROM connector_deliveries WHERE connector_id = ? GROUP BY status",
    connectorId,
  );
  const out: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 };
  for (const r of rows) out[r.status] = Number(r.n);
  return out;
}

export type AttemptRow = { delivery_id: string; attempt: number; at: string; status: number | null; error: string | null; duration_ms: number; response: string | null };

export async function attemptsOf(q: Queryable, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return q.all<AttemptRow>(
    `SELECT delivery_id, attempt, at, status, error, duration_ms, response FROM connector_attempts WHERE delivery_id IN (${placeholders(deliveryIds.length)}) ORDER BY seq`,
    ...deliveryIds,
  );
}

/** Due again now, with a fresh attempt budget (a manual retry of a failed or pending delivery). */
export async function requeueDelivery(q: Queryable, id: string, nowMs: number, now: string): Promise<void> {
  await q.run(
    "UPDATE connector_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, claimed_until = 0, claimed_by = NULL, updated_at = ? WHERE id = ?",
    nowMs,
    now,
    id,
  );
}

// ---- The drainer's queries

export type OutboxRow = { seq: number | string; id: string; project_id: string; type: string; payload: string; created_at: string };

/** Events not yet fanned out, oldest first; PostgreSQL skips rows another server is fanning out. */
export async function unfannedEvents(q: Queryable, engine: Engine, limit: number): Promise<OutboxRow[]> {
  const lock = engine === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
  return q.all<OutboxRow>(`SELECT seq, id, project_id, type, payload, created_at FROM outbox_events WHERE fanned_out_at IS NULL ORDER BY seq LIMIT ?${lock}`, limit);
}

export async function markFannedOut(q: Queryable, ids: string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await q.run(`UPDATE outbox_events SET fanned_out_at = ? WHERE id IN (${placeholders(ids.length)})`, now, ...ids);
}

export type ClaimedRow = Pick<DeliveryRow, "id" | "connector_id" | "project_id" | "event_id" | "event_type" | "payload" | "event_created_at" | "test" | "attempts">;

/**
 * Takes up to `limit` due deliveries for this server until `until` (epoch ms)
 * and counts the attempt: pending, due, not leased by anyone (or the lease ran
 * out), of an enabled connector (a test-fire goes to a disabled one too).
 * PostgreSQL locks the rows it takes and skips rows others are taking
 * (`FOR UPDATE SKIP LOCKED`), so two servers never take the same one; on
 * SQLite the write transaction is the only writer.
 */
export async function claimDue(q: Queryable, engine: Engine, options: { nowMs: number; until: number; holder: string; limit: number; now: string }): Promise<ClaimedRow[]> {
  const lock = engine === "postgres" ? " FOR UPDATE OF d SKIP LOCKED" : "";
  return q.all<ClaimedRow>(
    `UPDATE connector_deliveries SET claimed_until = ?1, claimed_by = ?2, attempts = attempts + 1, updated_at = ?5
     WHERE id IN (
       SELECT d.id FROM connector_deliveries d JOIN connectors c ON c.id = d.connector_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= ?3 AND d.claimed_until < ?3 AND (c.enabled = 1 OR d.test = 1)
       ORDER BY d.next_attempt_at, d.seq LIMIT ?4${lock}
     )
     RETURNING id, connector_id, project_id, event_id, event_type, payload, event_created_at, test, attempts`,
    options.until,
    options.holder,
    options.nowMs,
    options.limit,
    options.now,
  );
}

export type Outcome = {
  id: string;
  attempt: number;
  status: DeliveryStatus;
  nextAttemptAt: number;
  httpStatus: number | null;
  error: string | null;
  response: string | null;
  durationMs: number;
  at: string;
};

/** Rows per multi-row statement (SQLite allows 32,766 parameters; 100 rows stay far below). */
const CHUNK = 100;

function* chunks<T>(rows: T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += CHUNK) yield rows.slice(i, i + CHUNK);
}

/** Pending deliveries (fan-out's, a test-fire's), many rows per statement; a delivery a connector has for that event already is left alone. */
export async function insertDeliveries(q: Queryable, rows: NewDelivery[]): Promise<void> {
  for (const part of chunks(rows)) {
    await q.run(
      `INSERT INTO connector_deliveries (id, connector_id, project_id, event_id, event_type, payload, event_created_at, test, status, attempts, next_attempt_at, claimed_until, created_at, updated_at)
       VALUES ${part.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, 0, ?, ?)").join(", ")}
       ON CONFLICT (connector_id, event_id) DO NOTHING`,
      ...part.flatMap((d) => [d.id, d.connectorId, d.projectId, d.eventId, d.eventType, d.payload, d.eventCreatedAt, d.test ? 1 : 0, d.nextAttemptAt, d.now, d.now]),
    );
  }
}

/**
 * Records attempts and the deliveries' next states, many per statement: the
 * attempt rows (of deliveries that still exist), then each delivery's state,
 * only where this server still holds its lease.
 */
export async function recordOutcomes(q: Queryable, holder: string, outcomes: Outcome[]): Promise<void> {
  for (const part of chunks(outcomes)) {
    await q.run(
      `INSERT INTO connector_attempts (delivery_id, attempt, at, status, error, duration_ms, response)
       SELECT v.column1, CAST(v.column2 AS integer), v.column3, CAST(v.column4 AS integer), v.column5, CAST(v.column6 AS integer), v.column7
       FROM (VALUES ${part.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ")}) AS v
       WHERE EXISTS (SELECT 1 FROM connector_deliveries d WHERE d.id = v.column1)`,
      ...part.flatMap((o) => [o.id, o.attempt, o.at, o.httpStatus, o.error, o.durationMs, o.response]),
    );
    await q.run(
      `UPDATE connector_deliveries SET status = v.column2, next_attempt_at = CAST(v.column3 AS bigint), claimed_until = 0, claimed_by = NULL,
         last_status = CAST(v.column4 AS integer), last_error = v.column5, updated_at = v.column6, delivered_at = v.column7
       FROM (VALUES ${part.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ")}) AS v
       WHERE connector_deliveries.id = v.column1 AND connector_deliveries.claimed_by = ?`,
      ...part.flatMap((o) => [o.id, o.status, o.nextAttemptAt, o.httpStatus, o.error, o.at, o.status === "delivered" ? o.at : null]),
      holder,
    );
  }
}
