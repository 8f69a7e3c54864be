import { badRequest } from "./errors";
import type { Store } from "./store";

/**
 * Exactly-once ingest for deliveries an edge relay forwards (src/modules/relays/edge). The relay queues each
 * event batch, error report and intake item on its disk and sends it with `X-Svc-Delivery-Id: <uuid>`
 * until it gets an answer; an upstream killed mid-request may have stored it or not. The first answer
 * to an id is recorded here, and a repeat of the id gets that answer again without doing the work twice.
 * Requests without the header (every SDK) are untouched.
 */
export const DELIVERY_HEADER = "x-svc-delivery-id";

const DELIVERY_ID = /^[A-Za-z0-9_-]{8,80}$/;
/** Recorded answers are kept this long: a relay retries for at most a few days before an operator notices. */
const KEEP_MS = 14 * 24 * 3600_000;
/** Old answers are swept every this many recorded deliveries. */
const SWEEP_EVERY = 1000;
let recorded = 0;

export type DeliveredAnswer<T> = { status: number; body: T };

/** The request's delivery id, or undefined when none was sent; a malformed one is BAD_REQUEST. */
export function deliveryIdOf(headers: Record<string, string | undefined>): string | undefined {
  const id = headers[DELIVERY_HEADER];
  if (id === undefined || id === "") return undefined;
  if (!DELIVERY_ID.test(id)) throw badRequest("Malformed X-Svc-Delivery-Id", "X-Svc-Delivery-Id: 8 to 80 letters, digits, _ or -");
  return id;
}

/**
 * Runs `ingest` once per delivery id: a repeat answers what the first call answered. The answer is recorded
 * right after the ingest commits; an upstream killed in between (a window of one insert) stores a repeat
 * twice, never loses it.
 */
export async function deliverOnce<T>(store: Store, deliveryId: string | undefined, projectId: string, ingest: () => Promise<DeliveredAnswer<T>>): Promise<DeliveredAnswer<T>> {
  if (deliveryId === undefined) return ingest();
  const prior = await store.one<{ status: number | string; body: string }>(
    "SELECT status, body FROM relayed_deliveries WHERE id = ?1 AND project_id = ?2",
    deliveryId,
    projectId,
  );
  if (prior) return { status: Number(prior.status), body: JSON.parse(prior.body) as T };
  const answer = await ingest();
  const now = Date.now();
  await store.run(
    "INSERT INTO relayed_deliveries (id, project_id, status, body, at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO NOTHING",
    deliveryId,
    projectId,
    answer.status,
    JSON.stringify(answer.body ?? null),
    now,
  );
  if (++recorded % SWEEP_EVERY === 0) await store.run("DELETE FROM relayed_deliveries WHERE at < ?1", now - KEEP_MS);
  return answer;
}
