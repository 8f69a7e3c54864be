import type { Engine, Queryable } from "../../lib/store";

export type SightingRow = {
  relay_id: string;
  name: string;
  version: string;
  address: string;
  first_seen_at: string;
  last_seen_at: string;
  streams_open: string;
  last_stream_at: string | null;
};

export type Sighting = {
  projectId: string;
  relayId: string;
  name: string;
  version: string;
  address: string;
  at: string;
  /** Only for a stream's open or close (and its refresh): the envs this server streams to the relay now. */
  stream?: { envs: string[] };
};

/** Relays kept per project: the least recently seen beyond this are deleted when a new one is recorded. */
export const MAX_RELAYS_PER_PROJECT = 1000;

const COLUMNS = "relay_id, name, version, address, first_seen_at, last_seen_at, streams_open, last_stream_at";

/**
 * One sighting: the row is created, or updated with the latest name, version and address; last_seen_at and
 * last_stream_at only move forward (several servers each upsert their own view). A request-path sighting
 * leaves streams_open and last_stream_at as they are.
 */
export async function upsertSighting(q: Queryable, engine: Engine, s: Sighting): Promise<void> {
  const max = engine === "postgres" ? "GREATEST" : "MAX";
  const stream = s.stream
    ? `, streams_open = excluded.streams_open, last_stream_at = ${max}(COALESCE(relay_sightings.last_stream_at, ''), excluded.last_stream_at)`
    : "";
  await q.run(
    `INSERT INTO relay_sightings (project_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, relay_id) DO UPDATE SET name = excluded.name, version = excluded.version, address = excluded.address,
       last_seen_at = ${max}(relay_sightings.last_seen_at, excluded.last_seen_at)${stream}`,
    s.projectId,
    s.relayId,
    s.name,
    s.version,
    s.address,
    s.at,
    s.at,
    s.stream ? s.stream.envs.join(",") : "",
    s.stream ? s.at : null,
  );
}

export async function sightingsOf(q: Queryable, projectId: string, since: string): Promise<SightingRow[]> {
  return q.all<SightingRow>(`SELECT ${COLUMNS} FROM relay_sightings WHERE project_id = ? AND last_seen_at >= ? ORDER BY last_seen_at DESC, relay_id LIMIT ?`, projectId, since, MAX_RELAYS_PER_PROJECT);
}

export async function sightingOf(q: Queryable, projectId: string, relayId: string): Promise<SightingRow | undefined> {
  return q.one<SightingRow>(`SELECT ${COLUMNS} FROM relay_sightings WHERE project_id = ? AND relay_id = ?`, projectId, relayId);
}

export async function deleteSighting(q: Queryable, projectId: string, relayId: string): Promise<boolean> {
  return (await q.run("DELETE FROM relay_sightings WHERE project_id = ? AND relay_id = ?", projectId, relayId)) > 0;
}

/** Sightings not renewed since `before`, every project's. */
export async function sweepSightings(q: Queryable, before: string): Promise<number> {
  return q.run("DELETE FROM relay_sightings WHERE last_seen_at < ?", before);
}

/**
 * Deletes the project's sightings beyond the `keep` most recently seen: a key holder making up a new relay id on
 * every call cannot grow the table without bound. Counted first (the primary key's prefix), so a project under
 * the cap pays one indexed count.
 */
export async function trimSightings(q: Queryable, projectId: string, keep: number): Promise<number> {
  const row = await q.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM relay_sightings WHERE project_id = ?", projectId);
  const n = Number(row?.n ?? 0);
  if (n <= keep) return 0;
  return q.run(
    `DELETE FROM relay_sightings WHERE project_id = ? AND relay_id IN
       (SELECT relay_id FROM relay_sightings WHERE project_id = ? ORDER BY last_seen_at DESC, relay_id LIMIT ? OFFSET ?)`,
    projectId,
    projectId,
    n - keep,
    keep,
  );
}
