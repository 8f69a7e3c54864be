import { type Param, type Queryable, rowsByIdPrefix } from "../../lib/store";
import type { ErrorOccurrence, ErrorStatus, OccurrenceData, TrackedError } from "./types";

export type ErrorRow = {
  id: string;
  project_id: string;
  fingerprint: string;
  type: string;
  message: string;
  culprit: string | null;
  first_seen_at: string;
  last_seen_at: string;
  /** bigint on PostgreSQL: read through Number(). */
  count: number | string;
  affected_units: number | string;
  status: ErrorStatus;
  status_changed_at: string | null;
  status_changed_by: string | null;
};

const COLUMNS =
  "id, project_id, fingerprint, type, message, culprit, first_seen_at, last_seen_at, count, affected_units, status, status_changed_at, status_changed_by";

export function toTrackedError(r: ErrorRow): TrackedError {
  return {
    id: r.id,
    fingerprint: r.fingerprint,
    type: r.type,
    message: r.message,
    culprit: r.culprit,
    status: r.status,
    count: Number(r.count),
    affectedUnits: Number(r.affected_units),
    firstSeenAt: r.first_seen_at,
    lastSeenAt: r.last_seen_at,
    statusChangedAt: r.status_changed_at,
    statusChangedBy: r.status_changed_by,
  };
}

/**
 * Multi-row statements take batches of 128, 64, ... 1 rows, so that a
 * statement's text is one of eight whatever the batch size (both engines
 * cache statements by text).
 */
export function* batches<T>(items: T[]): Generator<T[]> {
  let at = 0;
  let size = 128;
  while (at < items.length) {
    while (size > items.length - at) size >>= 1;
    yield items.slice(at, at + size);
    at += size;
  }
}

/** Newest occurrence first; `status` narrows. */
export async function errorsOfProject(q: Queryable, projectId: string, status?: ErrorStatus): Promise<ErrorRow[]> {
  if (status) {
    return q.all<ErrorRow>(`SELECT ${COLUMNS} FROM tracked_errors WHERE project_id = ? AND status = ? ORDER BY last_seen_at DESC, id`, projectId, status);
  }
  return q.all<ErrorRow>(`SELECT ${COLUMNS} FROM tracked_errors WHERE project_id = ? ORDER BY last_seen_at DESC, id`, projectId);
}

/** By id, else by fingerprint, else by a prefix of the id that only one error has (up to two rows: two means ambiguous). */
export async function findErrors(q: Queryable, projectId: string, ref: string): Promise<ErrorRow[]> {
  const exact =
    (await q.one<ErrorRow>(`SELECT ${COLUMNS} FROM tracked_errors WHERE id = ? AND project_id = ?`, ref, projectId)) ??
    (await q.one<ErrorRow>(`SELECT ${COLUMNS} FROM tracked_errors WHERE fingerprint = ? AND project_id = ?`, ref, projectId));
  if (exact) return [exact];
  return rowsByIdPrefix<ErrorRow>(q, "tracked_errors", COLUMNS, projectId, ref);
}

export async function errorsByFingerprint(q: Queryable, projectId: string, fingerprints: string[]): Promise<Map<string, ErrorRow>> {
  const found = new Map<string, ErrorRow>();
  for (const batch of batches(fingerprints)) {
    const rows = await q.all<ErrorRow>(
      `SELECT ${COLUMNS} FROM tracked_errors WHERE project_id = ? AND fingerprint IN (${batch.map(() => "?").join(", ")})`,
      projectId,
      ...batch,
    );
    for (const r of rows) found.set(r.fingerprint, r);
  }
  return found;
}

export async function insertErrors(q: Queryable, rows: ErrorRow[]): Promise<void> {
  for (const batch of batches(rows)) {
    const params: Param[] = [];
    for (const r of batch) {
      params.push(r.id, r.project_id, r.fingerprint, r.type, r.message, r.culprit, r.first_seen_at, r.last_seen_at, Number(r.count), Number(r.affected_units), r.status, r.status_changed_at, r.status_changed_by);
    }
    await q.run(`INSERT INTO tracked_errors (${COLUMNS}) VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`, ...params);
  }
}

export type OccurrenceUpdate = {
  id: string;
  type: string;
  message: string;
  culprit: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  count: number;
  units: number;
  status: ErrorStatus;
  statusChangedAt: string | null;
  statusChangedBy: string | null;
};

/**
 * New occurrences of known errors: counts added to, sample and times moved,
 * status as decided by the service. One statement per batch of rows (an
 * UPDATE … FROM VALUES, on both engines), so a call of 1,000 known errors
 * is a few statements, not 1,000.
 */
export async function updateOccurrences(q: Queryable, updates: OccurrenceUpdate[]): Promise<void> {
  for (const batch of batches(updates)) {
    const params: Param[] = [];
    for (const r of batch) params.push(r.id, r.type, r.message, r.culprit, r.firstSeenAt, r.lastSeenAt, r.count, r.units, r.status, r.statusChangedAt, r.statusChangedBy);
    // VALUES columns are column1, column2, ... on both engines; the numbers are cast because PostgreSQL may read them as text.
    await q.run(
      `UPDATE tracked_errors SET type = v.column2, message = v.column3, culprit = v.column4, first_seen_at = v.column5, last_seen_at = v.column6,
         count = tracked_errors.count + CAST(v.column7 AS INTEGER), affected_units = tracked_errors.affected_units + CAST(v.column8 AS INTEGER),
         status = v.column9, status_changed_at = v.column10, status_changed_by = v.column11
       FROM (VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}) AS v
       WHERE tracked_errors.id = v.column1`,
      ...params,
    );
  }
}

/** Inserts (error, unit) pairs, ignoring those already there; answers how many each error gained. */
export async function addUnits(q: Queryable, pairs: [errorId: string, unitId: string][]): Promise<Map<string, number>> {
  const gained = new Map<string, number>();
  for (const batch of batches(pairs)) {
    const rows = await q.all<{ error_id: string }>(
      `INSERT INTO tracked_error_units (error_id, unit_id) VALUES ${batch.map(() => "(?, ?)").join(", ")} ON CONFLICT DO NOTHING RETURNING error_id`,
      ...batch.flat(),
    );
    for (const r of rows) gained.set(r.error_id, (gained.get(r.error_id) ?? 0) + 1);
  }
  return gained;
}

export async function setStatus(q: Queryable, id: string, status: ErrorStatus, at: string, by: string): Promise<void> {
  await q.run("UPDATE tracked_errors SET status = ?, status_changed_at = ?, status_changed_by = ? WHERE id = ?", status, at, by, id);
}

/** A kept occurrence (table error_occurrences); `data` is OccurrenceData as JSON. */
export type OccurrenceRow = {
  id: string;
  error_id: string;
  /** The occurrence's number among the error's, in the order received (bigint on PostgreSQL). */
  seq: number | string;
  kept: "recent" | "sample";
  /** The sample's reservoir slot (0 to OCCURRENCES_SAMPLE - 1); null while recent. */
  slot: number | string | null;
  ts: string;
  data: string;
};

const OCCURRENCE_COLUMNS = "id, error_id, seq, kept, slot, ts, data";

export function toOccurrence(r: OccurrenceRow): ErrorOccurrence {
  return { id: r.id, ts: r.ts, kept: r.kept, ...(JSON.parse(r.data) as OccurrenceData) };
}

/** An error's kept occurrences, newest received first (the recent ones, then the sample). */
export async function occurrencesOf(q: Queryable, errorId: string): Promise<OccurrenceRow[]> {
  return q.all<OccurrenceRow>(`SELECT ${OCCURRENCE_COLUMNS} FROM error_occurrences WHERE error_id = ? ORDER BY seq DESC`, errorId);
}

/** The kept occurrences of several errors, without their data, by error id. */
export async function occurrenceRowsOf(q: Queryable, errorIds: string[]): Promise<Map<string, OccurrenceRow[]>> {
  const found = new Map<string, OccurrenceRow[]>();
  for (const batch of batches(errorIds)) {
    const rows = await q.all<OccurrenceRow>(
      `SELECT id, error_id, seq, kept, slot, ts, '' AS data FROM error_occurrences WHERE error_id IN (${batch.map(() => "?").join(", ")})`,
      ...batch,
    );
    for (const r of rows) found.set(r.error_id, [...(found.get(r.error_id) ?? []), r]);
  }
  return found;
}

export async function insertOccurrences(q: Queryable, rows: OccurrenceRow[]): Promise<void> {
  for (const batch of batches(rows)) {
    const params: Param[] = [];
    for (const r of batch) params.push(r.id, r.error_id, Number(r.seq), r.kept, r.slot === null ? null : Number(r.slot), r.ts, r.data);
    await q.run(`INSERT INTO error_occurrences (${OCCURRENCE_COLUMNS}) VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?, ?)").join(", ")}`, ...params);
  }
}

/** Recent occurrences that became samples, each in its reservoir slot. */
export async function demoteOccurrences(q: Queryable, rows: { id: string; slot: number }[]): Promise<void> {
  for (const batch of batches(rows)) {
    // As in updateOccurrences: VALUES columns are column1, column2; the slot is cast for PostgreSQL.
    await q.run(
      `UPDATE error_occurrences SET kept = 'sample', slot = CAST(v.column2 AS INTEGER)
       FROM (VALUES ${batch.map(() => "(?, ?)").join(", ")}) AS v WHERE error_occurrences.id = v.column1`,
      ...batch.flatMap((r) => [r.id, r.slot]),
    );
  }
}

export async function deleteOccurrences(q: Queryable, ids: string[]): Promise<void> {
  for (const batch of batches(ids)) await q.run(`DELETE FROM error_occurrences WHERE id IN (${batch.map(() => "?").join(", ")})`, ...batch);
}
