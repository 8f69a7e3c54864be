import { AsyncLocalStorage } from "node:async_hooks";
import { randomBase62 } from "../ids";
import type { ChangeListener, CommitCheck, Engine, Param, Store, Tx } from "./types";

/** What an engine gives the shared transaction logic. */
export type Announcement = { channel: string; payload: string };

export type ActiveTx = Tx & { readonly announcements: Announcement[] };

/**
 * What both engines share: joining nested writes (through the async
 * context, so a service called inside another's transaction joins it),
 * reads inside a write going to that write's connection, local delivery of
 * announcements once the transaction has committed, and the lease table.
 */
export abstract class BaseStore implements Store {
  abstract readonly engine: Engine;
  abstract readonly location: string;
  epoch = "";
  /** This process among all that share the store: its own announcements arrive locally, never twice. */
  readonly origin = randomBase62(12);
  protected readonly scope = new AsyncLocalStorage<ActiveTx>();
  private readonly listeners = new Map<string, Set<ChangeListener>>();
  private readonly commitChecks = new Map<string, Set<CommitCheck>>();
  protected onListenerError: (err: unknown, channel: string) => void = () => {};

  /** What the database is (file or cluster + database): a copy or a restore has another identity, and gets a new epoch. */
  abstract identity(): Promise<string>;
  /** Starts hearing other processes' announcements (after migrations made their tables). */
  abstract start(): Promise<void>;
  protected abstract transaction<T>(fn: (tx: ActiveTx) => Promise<T>): Promise<T>;
  protected abstract readOne<T>(sql: string, params: Param[]): Promise<T | undefined>;
  protected abstract readAll<T>(sql: string, params: Param[]): Promise<T[]>;
  protected abstract runOutside(sql: string, params: Param[]): Promise<number>;
  abstract exec(sql: string): Promise<void>;
  abstract isUniqueViolation(err: unknown): boolean;
  abstract close(): Promise<void>;

  setListenerErrorHandler(fn: (err: unknown, channel: string) => void): void {
    this.onListenerError = fn;
  }

  one<T>(sql: string, ...params: Param[]): Promise<T | undefined> {
    const tx = this.scope.getStore();
    return tx ? tx.one<T>(sql, ...params) : this.readOne<T>(sql, params);
  }

  all<T>(sql: string, ...params: Param[]): Promise<T[]> {
    const tx = this.scope.getStore();
    return tx ? tx.all<T>(sql, ...params) : this.readAll<T>(sql, params);
  }

  run(sql: string, ...params: Param[]): Promise<number> {
    const tx = this.scope.getStore();
    return tx ? tx.run(sql, ...params) : this.runOutside(sql, params);
  }

  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const joined = this.scope.getStore();
    if (joined) return fn(joined);
    let said: Announcement[] = [];
    let afterCommit: (() => void)[] = [];
    const result = await this.transaction(async (tx) => {
      // Per attempt: a PostgreSQL retry runs everything again.
      const after: (() => void)[] = [];
      const value = await this.scope.run(tx, async () => {
        const out = await fn(tx);
        if (this.commitChecks.size > 0 && tx.announcements.length > 0) await this.runCommitChecks(tx.announcements, after);
        return out;
      });
      said = tx.announcements;
      afterCommit = after;
      return value;
    });
    for (const fn of afterCommit) {
      try {
        fn();
      } catch (err) {
        this.onListenerError(err, "after commit");
      }
    }
    for (const { channel, payload } of said) this.deliver(channel, payload);
    return result;
  }

  checkBeforeCommit(channel: string, check: CommitCheck): () => void {
    let set = this.commitChecks.get(channel);
    if (!set) this.commitChecks.set(channel, (set = new Set()));
    set.add(check);
    return () => {
      set!.delete(check);
      if (set!.size === 0 && this.commitChecks.get(channel) === set) this.commitChecks.delete(channel);
    };
  }

  committed<T>(fn: () => Promise<T>): Promise<T> {
    return this.scope.exit(fn);
  }

  /** The checks of each channel this transaction announced on, with that channel's payloads (still inside it). */
  private async runCommitChecks(announcements: Announcement[], after: (() => void)[]): Promise<void> {
    for (const [channel, checks] of this.commitChecks) {
      const payloads = announcements.filter((a) => a.channel === channel).map((a) => a.payload);
      if (payloads.length === 0) continue;
      for (const check of [...checks]) {
        const then = await check(payloads);
        if (then) after.push(then);
      }
    }
  }

  listen(channel: string, fn: ChangeListener): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  /** Calls this process's listeners of `channel`; one failing listener does not stop the others. */
  protected deliver(channel: string, payload: string): void {
    for (const fn of this.listeners.get(channel) ?? []) {
      try {
        fn(payload);
      } catch (err) {
        this.onListenerError(err, channel);
      }
    }
  }

  /** Tells every listener of every channel to reload (announcements may have been missed). */
  protected deliverResync(resync: string): void {
    for (const channel of this.listeners.keys()) this.deliver(channel, resync);
  }

  async lease(name: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    // Taken when free, expired, or already ours (a renewal); the WHERE makes the upsert a no-op otherwise.
    const changed = await this.write((tx) =>
      tx.run(
        `INSERT INTO store_leases (name, holder, expires_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (name) DO UPDATE SET holder = ?2, expires_at = ?3
         WHERE store_leases.holder = ?2 OR store_leases.expires_at < ?4`,
        name,
        this.origin,
        now + ttlMs,
        now,
      ),
    );
    return changed > 0;
  }

  /** When this process next deletes rate windows that have ended (at most once per RATE_SWEEP_MS). */
  private nextRateSweep = 0;
  /** Hits waiting for this turn's batch (null: none scheduled). */
  private rateHits: PendingHit[] | null = null;

  countHit(key: string, windowMs: number, now: number, hits = 1): Promise<{ count: number; resetAt: number }> {
    // The batch is a write of its own: awaited inside another write, it would wait for that one's lock forever (SQLite).
    if (this.scope.getStore()) return Promise.reject(new Error("countHit inside a write transaction: take rate limits before the write"));
    return new Promise((resolve, reject) => {
      if (this.rateHits === null) {
        this.rateHits = [];
        setImmediate(() => void this.countBatch());
      }
      this.rateHits.push({ key, windowMs, now, hits, resolve, reject });
    });
  }

  /**
   * The hits of one turn of the event loop, counted in one write transaction by one multi-row upsert (a public
   * endpoint under load would otherwise spend a transaction per call on its limits). Keys in order, so two
   * servers' batches lock rows in the same order; a key's hits get consecutive counts in arrival order. The
   * batch's moment is its latest hit's: a window starts there and lasts its rule's length.
   */
  private async countBatch(): Promise<void> {
    const hits = this.rateHits ?? [];
    this.rateHits = null;
    /** Each key's hits in arrival order, and their sum. */
    const byKey = new Map<string, { hits: PendingHit[]; sum: number }>();
    let now = 0;
    for (const hit of hits) {
      const group = byKey.get(hit.key);
      if (group) {
        group.hits.push(hit);
        group.sum += hit.hits;
      } else byKey.set(hit.key, { hits: [hit], sum: hit.hits });
      now = Math.max(now, hit.now);
    }
    if (now >= this.nextRateSweep) {
      this.nextRateSweep = now + RATE_SWEEP_MS;
      // A sweep that fails (the store unreachable) leaves its rows to the next one, a minute on.
      void this.sweepRateWindows(now).catch(() => {});
    }
    const keys = [...byKey.keys()].sort();
    try {
      const counted = await this.write(async (tx) => {
        const rows: { key: string; hits: number | string; reset_at: number | string }[] = [];
        for (let i = 0; i < keys.length; i += RATE_ROWS_PER_STATEMENT) {
          const chunk = keys.slice(i, i + RATE_ROWS_PER_STATEMENT);
          const params: Param[] = [now];
          const values = chunk.map((key) => {
            const group = byKey.get(key)!;
            params.push(key, group.sum, now + group.hits[0]!.windowMs);
            const n = params.length;
            return `(?${n - 2}, ?${n - 1}, ?${n})`;
          });
          // Both SET expressions read the row as it was: an ended window starts again with this batch's hits.
          rows.push(
            ...(await tx.all<{ key: string; hits: number | string; reset_at: number | string }>(
              `INSERT INTO store_rate_windows (key, hits, reset_at) VALUES ${values.join(", ")}
               ON CONFLICT (key) DO UPDATE SET
                 hits = CASE WHEN store_rate_windows.reset_at <= ?1 THEN excluded.hits ELSE store_rate_windows.hits + excluded.hits END,
                 reset_at = CASE WHEN store_rate_windows.reset_at <= ?1 THEN excluded.reset_at ELSE store_rate_windows.reset_at END
               RETURNING key, hits, reset_at`,
              ...params,
            )),
          );
        }
        return rows;
      });
      for (const row of counted) {
        // In arrival order: each caller's count is the window's total once its own hits are in.
        const group = byKey.get(row.key)!;
        let after = Number(row.hits) - group.sum;
        const resetAt = Number(row.reset_at);
        for (const hit of group.hits) hit.resolve({ count: (after += hit.hits), resetAt });
      }
    } catch (err) {
      for (const hit of hits) hit.reject(err);
    }
  }

  /**
   * Deletes the rate windows that ended, RATE_SWEEP_ROWS per transaction until none is left: apart from the
   * hits' batches, so it neither holds their rows nor waits for them. The outer `reset_at` test is checked
   * again on a row another server renewed meanwhile (PostgreSQL re-reads a row it waited for), and PostgreSQL
   * skips rows a batch holds rather than waiting for them.
   */
  private async sweepRateWindows(now: number): Promise<void> {
    const locked = this.engine === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
    const sql = `DELETE FROM store_rate_windows WHERE reset_at <= ?1 AND key IN (SELECT key FROM store_rate_windows WHERE reset_at <= ?1 LIMIT ?2${locked})`;
    while ((await this.write((tx) => tx.run(sql, now, RATE_SWEEP_ROWS))) === RATE_SWEEP_ROWS);
  }
}

type PendingHit = { key: string; windowMs: number; now: number; hits: number; resolve: (hit: { count: number; resetAt: number }) => void; reject: (err: unknown) => void };

/** How often a process deletes ended rate windows, and how many rows one of its transactions deletes at most. */
const RATE_SWEEP_MS = 60_000;
const RATE_SWEEP_ROWS = 1000;
/** Rows of one upsert statement (three parameters each): well under both engines' parameter limits. */
const RATE_ROWS_PER_STATEMENT = 500;
