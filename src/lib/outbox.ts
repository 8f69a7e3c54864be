import { newId, nowIso } from "./ids";
import type { OutboxEventType } from "./outbox-types";
import type { Migration, Tx } from "./store";

/**
 * The durable outbox: what happened that the outside world should hear
 * (connectors, issue 15). A module that changes something worth telling
 * calls `emitEvent` inside the transaction of the change, so the event
 * exists if and only if the change committed: nothing is lost when the
 * server dies right after, and nothing is announced that was rolled back.
 * The connectors module drains the table: it fans each event out to the
 * project's subscribed connectors as deliveries and sends them with retries.
 *
 * Event types and their payloads are listed in OUTBOX_EVENT_TYPES; a module
 * emitting one keeps its payload to the documented shape.
 */
export { OUTBOX_EVENT_TYPES, type OutboxEventType } from "./outbox-types";

/** Wakes the drainer of this server at once (other servers find the row on their next poll). */
export const OUTBOX_CHANNEL = "outbox";

export const OUTBOX_MIGRATIONS: Migration[] = [
  {
    name: "outbox_events",
    sqlite: `
CREATE TABLE outbox_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL,
  fanned_out_at TEXT
) STRICT;
CREATE INDEX outbox_events_pending ON outbox_events (seq) WHERE fanned_out_at IS NULL;
`,
    postgres: `
CREATE TABLE outbox_events (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  type text NOT NULL,
  payload text NOT NULL,
  created_at text NOT NULL,
  fanned_out_at text
);
CREATE INDEX outbox_events_pending ON outbox_events (seq) WHERE fanned_out_at IS NULL;
`,
  },
];

export type OutboxEvent = { id: string; projectId: string; type: OutboxEventType; payload: Record<string, unknown>; createdAt: string };

/**
 * Records an event in the caller's transaction; answers its id (`evt_…`,
 * also the idempotency key every delivery of it carries). The drainer is
 * woken after the commit through the store's notification channel, once per
 * transaction whatever the number of events (the payload is the first id).
 */
export async function emitEvent(tx: Tx, event: { projectId: string; type: OutboxEventType; payload: Record<string, unknown> }): Promise<string> {
  const id = newId("evt");
  await tx.run(
    "INSERT INTO outbox_events (id, project_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)",
    id,
    event.projectId,
    event.type,
    JSON.stringify(event.payload),
    nowIso(),
  );
  // One wake-up per transaction: a batch of filings (the intake's group commit) needs one, not one per event.
  if (!announced.has(tx)) {
    announced.add(tx);
    tx.announce(OUTBOX_CHANNEL, id);
  }
  return id;
}

/** Transactions that have announced an event already (the drainer reads the table, not the payload). */
const announced = new WeakSet<Tx>();
