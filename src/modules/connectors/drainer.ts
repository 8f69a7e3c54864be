import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { OUTBOX_CHANNEL } from "../../lib/outbox";
import { TargetRefused, outgoingFetch } from "../../lib/outgoing";
import { ADAPTERS, type AdapterContext, SendProblem, type SendResult, type SendTarget } from "./adapters";
import type { DeliveryEnvelope } from "./events";
import { OAuthError } from "./oauth";
import { type ResolvedConnectorOptions, backoffMs } from "./options";
import { SecretKeyError } from "./secrets";
import {
  type ClaimedRow,
  type ConnectorRow,
  type NewDelivery,
  type Outcome,
  claimDue,
  enabledConnectorsOf,
  insertDeliveries,
  markFannedOut,
  placeholders,
  recordOutcomes,
  unfannedEvents,
} from "./store";

/** Outbox events fanned out per transaction. */
const FAN_OUT_BATCH = 500;
/** Deliveries taken per claim at most. */
const CLAIM_BATCH = 200;
const PRUNE_EVERY_MS = 3600_000;
/** Delivered and failed deliveries (and their attempts) are kept this long, fanned-out events a week. */
const KEEP_DELIVERIES_MS = 30 * 86_400_000;
const KEEP_EVENTS_MS = 7 * 86_400_000;

export type DrainerDeps = {
  /** The connector ready to send with (throws for unreadable credentials). */
  open(row: Pick<ConnectorRow, "id" | "provider" | "config" | "credentials">): SendTarget;
  oauthToken(target: SendTarget): Promise<string>;
};

/**
 * The outbox drainer, one per server. Woken by the store channel `outbox`
 * (every emit, test-fire, retry and enable announces there after commit)
 * and by a poll (`pollMs`, 1 s), it:
 *
 * 1. fans out each outbox event not yet fanned out into one pending delivery
 *    per enabled connector of its project that subscribes to its type, and
 *    marks the event, in one transaction (PostgreSQL: `FOR UPDATE SKIP
 *    LOCKED`, so servers share the work; a delivery is unique per connector
 *    and event, so nothing is fanned out twice);
 * 2. claims due deliveries with a lease (`claimed_until`, `leaseMs`) and
 *    counts the attempt, in one transaction (PostgreSQL: `FOR UPDATE SKIP
 *    LOCKED`; SQLite has one writer), so no two servers send one delivery
 *    at once;
 * 3. sends each through its provider's adapter (at most `concurrency` in
 *    flight) and records the attempt and the next state in batches:
 *    `delivered` on 2xx; else due again after 1 s, 2 s, 4 s … capped at 1 h
 *    (or the vendor's Retry-After), `failed` after `maxAttempts`.
 *
 * At least once: a server killed between a vendor's answer and the record
 * sends that delivery again once its lease runs out; every call carries
 * `Idempotency-Key: <event id>` for the receiver to drop the repeat.
 */
export class Drainer {
  private started = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private inFlight = 0;
  private idle: (() => void)[] = [];
  /** Outcomes waiting to be written, each with the resolve of its send (a slot is free only once its outcome is recorded). */
  private outcomes: { outcome: Outcome; recorded: () => void }[] = [];
  private flushing: Promise<void> | undefined;
  private unlisten: (() => void) | undefined;
  private lastPrune = 0;
  private readonly adapterCtx: AdapterContext;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly options: ResolvedConnectorOptions,
    private readonly deps: DrainerDeps,
  ) {
    this.adapterCtx = {
      urls: options.urls,
      fetch: (url, init, userTarget) => outgoingFetch(url, init, { timeoutMs: options.sendTimeoutMs, target: userTarget ? { allowPrivate: options.allowPrivateTargets } : undefined }),
      oauthToken: (target) => deps.oauthToken(target),
      githubTokens: new Map(),
    };
  }

  /** This server's lease holder name (the store's process id). */
  private get holder(): string {
    return (this.ctx.store as { origin?: string }).origin ?? "svc";
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.unlisten = this.ctx.store.listen(OUTBOX_CHANNEL, () => this.wake());
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    const fn = this.wakeUp;
    this.wakeUp = undefined;
    fn?.();
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        done();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.woken = false;
        done();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let busy = false;
      try {
        busy = (await this.fanOut()) > 0;
        // Claims in batches: once half the slots are free (a claim per freed slot would be a transaction per delivery).
        if (this.inFlight <= this.options.concurrency / 2) busy = (await this.claimAndSend()) > 0 || busy;
        await this.prune();
      } catch (err) {
        this.ctx.log.warn("connector delivery round failed; trying again shortly", { error: String(err) });
        busy = false;
      }
      if (this.stopped) break;
      // Work left: go on at once unless the slots are taken (a send finishing wakes the loop once half are free).
      if (busy && this.inFlight <= this.options.concurrency / 2) continue;
      await this.sleep(this.options.pollMs);
    }
  }

  /** One fan-out and one claim round now (tests; the loop does the same). */
  async drainOnce(): Promise<void> {
    while ((await this.fanOut()) > 0);
    await this.claimAndSend();
    await this.settled();
  }

  /** Fans out one batch of outbox events; answers how many events it took. */
  private async fanOut(): Promise<number> {
    const { store } = this.ctx;
    // A cheap read first: an idle server opens no write transaction.
    if (!(await store.one("SELECT 1 AS x FROM outbox_events WHERE fanned_out_at IS NULL LIMIT 1"))) return 0;
    return store.write(async (tx) => {
      const events = await unfannedEvents(tx, store.engine, FAN_OUT_BATCH);
      if (events.length === 0) return 0;
      const projects = [...new Set(events.map((e) => e.project_id))];
      const byProject = new Map<string, { id: string; events: string[] }[]>();
      for (const c of await enabledConnectorsOf(tx, projects)) {
        let list = byProject.get(c.project_id);
        if (!list) byProject.set(c.project_id, (list = []));
        try {
          list.push({ id: c.id, events: JSON.parse(c.events) as string[] });
        } catch {
          // A connector with unreadable events hears nothing.
        }
      }
      const now = nowIso();
      const nowMs = Date.now();
      const deliveries: NewDelivery[] = [];
      for (const e of events) {
        for (const c of byProject.get(e.project_id) ?? []) {
          if (!c.events.includes(e.type)) continue;
          deliveries.push({
            id: newId("dlv"),
            connectorId: c.id,
            projectId: e.project_id,
            eventId: e.id,
            eventType: e.type,
            payload: e.payload,
            eventCreatedAt: e.created_at,
            test: false,
            nextAttemptAt: nowMs,
            now,
          });
        }
      }
      await insertDeliveries(tx, deliveries);
      await markFannedOut(
        tx,
        events.map((e) => e.id),
        now,
      );
      return events.length;
    });
  }

  /** Claims what is due (up to the free slots) and starts sending it; answers how many it took. */
  private async claimAndSend(): Promise<number> {
    const { store } = this.ctx;
    const nowMs = Date.now();
    const due = await store.one(
      "SELECT 1 AS x FROM connector_deliveries WHERE status = 'pending' AND next_attempt_at <= ? AND claimed_until < ? LIMIT 1",
      nowMs,
      nowMs,
    );
    if (!due) return 0;
    const limit = Math.min(CLAIM_BATCH, this.options.concurrency - this.inFlight);
    if (limit <= 0) return 0;
    const claimed = await store.write((tx) => claimDue(tx, store.engine, { nowMs, until: nowMs + this.options.leaseMs, holder: this.holder, limit, now: nowIso() }));
    if (claimed.length === 0) return 0;
    const targets = await this.targetsFor([...new Set(claimed.map((c) => c.connector_id))]);
    for (const row of claimed) {
      this.inFlight++;
      void this.send(row, targets.get(row.connector_id) ?? new SendProblem("the connector was deleted")).finally(() => {
        this.inFlight--;
        if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
        if (this.inFlight <= this.options.concurrency / 2) this.wake();
      });
    }
    return claimed.length;
  }

  /** The claimed deliveries' connectors, opened once per round. */
  private async targetsFor(ids: string[]): Promise<Map<string, SendTarget | Error>> {
    const rows = await this.ctx.store.all<Pick<ConnectorRow, "id" | "provider" | "config" | "credentials">>(
      `SELECT id, provider, config, credentials FROM connectors WHERE id IN (${placeholders(ids.length)})`,
      ...ids,
    );
    const out = new Map<string, SendTarget | Error>();
    for (const row of rows) {
      try {
        out.set(row.id, this.deps.open(row));
      } catch (err) {
        out.set(row.id, err instanceof Error ? err : new Error(String(err)));
      }
    }
    return out;
  }

  private async send(row: ClaimedRow, target: SendTarget | Error): Promise<void> {
    const started = performance.now();
    const at = nowIso();
    const attempt = Number(row.attempts);
    let result: SendResult;
    try {
      if (target instanceof Error) throw target;
      let data: Record<string, unknown> = {};
      try {
        data = JSON.parse(row.payload) as Record<string, unknown>;
      } catch {
        // An unreadable payload is sent empty rather than never.
      }
      const envelope: DeliveryEnvelope = { id: row.event_id, type: row.event_type, projectId: row.project_id, createdAt: row.event_created_at, test: Number(row.test) === 1, data };
      result = await ADAPTERS[target.provider](this.adapterCtx, { connector: target, envelope, deliveryId: row.id, attempt });
    } catch (err) {
      result = { ok: false, status: null, error: describeError(err), response: null };
    }
    const durationMs = Math.round(performance.now() - started);
    const test = Number(row.test) === 1;
    let status: Outcome["status"] = "delivered";
    let nextAttemptAt = Date.now();
    if (!result.ok) {
      // A test-fire is tried once; a real delivery until maxAttempts.
      if (test || attempt >= this.options.maxAttempts) status = "failed";
      else {
        status = "pending";
        const wait = Math.min(Math.max(backoffMs(attempt, this.options.retryBaseMs, this.options.retryMaxMs), result.retryAfterMs ?? 0), this.options.retryMaxMs);
        nextAttemptAt = Date.now() + wait;
      }
    }
    // The slot stays taken until the outcome is written: what a killed server had sent but not recorded is at most
    // `concurrency` deliveries (sent again, with the same Idempotency-Key, once their lease runs out).
    await new Promise<void>((recorded) => {
      this.outcomes.push({ outcome: { id: row.id, attempt, status, nextAttemptAt, httpStatus: result.status, error: storable(result.error), response: storable(result.response), durationMs, at }, recorded });
      this.flush();
    });
  }

  /** Writes the recorded outcomes in one transaction; outcomes that arrive meanwhile go in the next. */
  private flush(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      let failures = 0;
      while (this.outcomes.length > 0) {
        const batch = this.outcomes.splice(0, 500);
        try {
          await this.ctx.store.write(async (tx) => {
            await recordOutcomes(
              tx,
              this.holder,
              batch.map((o) => o.outcome),
            );
          });
          failures = 0;
          for (const o of batch) o.recorded();
        } catch (err) {
          // The store could not take it: keep them and try again (the lease covers a short outage). Closing, give up
          // after a few tries: those deliveries are sent again once their lease runs out.
          this.outcomes.unshift(...batch);
          this.ctx.log.warn("recording connector deliveries failed; retrying", { error: String(err), pending: this.outcomes.length });
          if (this.stopped && ++failures >= 5) {
            for (const o of this.outcomes.splice(0)) o.recorded();
            break;
          }
          await Bun.sleep(200);
        }
      }
    })().finally(() => {
      this.flushing = undefined;
      // Recorded between the last batch and now: write those too.
      if (this.outcomes.length > 0) this.flush();
    });
  }

  /** Resolves when no send is in flight (each one's outcome is written before its slot is free). */
  private async settled(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((done) => this.idle.push(done));
  }

  /** Deletes old delivered/failed deliveries and fanned-out events, once an hour on one server. */
  private async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    if (!(await this.ctx.store.lease("connectors:prune", PRUNE_EVERY_MS * 0.9))) return;
    await this.ctx.store.write(async (tx) => {
      await tx.run("DELETE FROM connector_deliveries WHERE status <> 'pending' AND updated_at < ?", new Date(now - KEEP_DELIVERIES_MS).toISOString());
      await tx.run("DELETE FROM outbox_events WHERE fanned_out_at IS NOT NULL AND fanned_out_at < ?", new Date(now - KEEP_EVENTS_MS).toISOString());
    });
  }

  /** Stops claiming, lets sends in flight finish (each bounded by the send timeout) and records them. */
  async close(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    this.unlisten?.();
    this.wake();
    await this.loop;
    await this.settled();
  }
}

/**
 * Text a vendor sent, as the log can keep it: PostgreSQL text refuses NUL, and one answer with a NUL byte would fail
 * every retry of the batch that records it (the drainer's slots then never free).
 */
function storable(text: string | null): string | null {
  return text === null ? null : text.replaceAll("\u0000", "\uFFFD");
}

function describeError(err: unknown): string {
  if (err instanceof SendProblem || err instanceof OAuthError || err instanceof SecretKeyError) return err.message;
  if (err instanceof TargetRefused) return `refused target: ${err.message}`.slice(0, 500);
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === "TimeoutError") return "timed out waiting for the vendor";
  const message = e?.message ?? String(err);
  return `network: ${message}${e?.code && !message.includes(e.code) ? ` (${e.code})` : ""}`.slice(0, 500);
}
