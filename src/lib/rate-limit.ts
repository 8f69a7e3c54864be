import { tooManyRequests } from "./errors";
import { sha256Hex } from "./ids";
import type { Store } from "./store";

/** At most `limit` hits per `windowMs` per key. */
export type RateRule = { limit: number; windowMs: number };

/** How often expired windows are dropped when no rule says (the longest window of the rules in use is typical). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Fixed-window counters in memory, for one server process: the allowances
 * of busy paths (new tracked errors a minute, a browser key's calls per
 * client address), where a write per call would cost more than the limit
 * saves, so losing them on a restart is harmless. Behind N servers a caller
 * reaches N times them; the limits of public endpoints are SharedRateLimiter's.
 * Expired windows are dropped at most once per sweep interval, so a flood
 * of distinct keys costs memory for about one window and never a scan per
 * request.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one hit on `key`; over the limit it throws 429 with the seconds until the key's window resets. */
  take(key: string, rule: RateRule): void {
    const { window, now } = this.current(key, rule);
    if (window.count >= rule.limit) throw tooManyRequests(Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
    window.count++;
  }

  /**
   * What is left of `key`'s current window without counting anything, and
   * the seconds until it resets: for allowances taken in part (so many of a
   * batch fit) rather than refused whole. `add` then counts what was used.
   */
  remaining(key: string, rule: RateRule): { remaining: number; retryAfter: number } {
    const now = this.now();
    const window = this.windows.get(key);
    if (!window || window.resetAt <= now) return { remaining: rule.limit, retryAfter: Math.ceil(rule.windowMs / 1000) };
    return { remaining: Math.max(0, rule.limit - window.count), retryAfter: Math.max(1, Math.ceil((window.resetAt - now) / 1000)) };
  }

  /** Counts `n` hits on `key` (never throws: the caller checked `remaining`). */
  add(key: string, rule: RateRule, n: number): void {
    if (n > 0) this.current(key, rule).window.count += n;
  }

  /** The key's window, a new one when it has none or its window ended (expired ones are swept first). */
  private current(key: string, rule: RateRule): { window: { count: number; resetAt: number }; now: number } {
    const now = this.now();
    if (now >= this.nextSweep) {
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
      this.nextSweep = now + Math.max(rule.windowMs, SWEEP_EVERY_MS);
    }
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + rule.windowMs };
      this.windows.set(key, window);
    }
    return { window, now };
  }
}

/** Keys at most remembered as over their limit per process (a flood of distinct keys clears them: they are only a shortcut). */
const FULL_KEYS_MAX = 10_000;

/** Keys a shared limiter knows to be over their limit, each until its window ends: refused from memory, with no write. */
class FullKeys {
  private readonly until = new Map<string, number>();

  /** Throws 429 while `key`'s window is known full; forgets it once that window has ended. */
  refuseIfFull(key: string, now: number): void {
    const until = this.until.get(key);
    if (until === undefined) return;
    if (until > now) throw tooManyRequests(secondsUntil(until, now));
    this.until.delete(key);
  }

  mark(key: string, until: number): void {
    if (this.until.size >= FULL_KEYS_MAX) this.until.clear();
    this.until.set(key, until);
  }
}

/**
 * Fixed-window counters every server shares, kept in the store (`Store.countHit`): the limits of the endpoints
 * anyone may call (sign-in links, device codes, the public intake), so behind N servers a caller still gets the
 * limit once, not N times. A hit is a row of the store's batch for its turn of the event loop (one write
 * transaction and one upsert per turn, not per call). Measured on the intake bench (`bun run bench --binary
 * --only intake`), against limits per process in the same hour: 11.4k filings/s against 11.6k, and 26k deduped
 * answers/s against 38k; a transaction per hit had made it 5.9k filings/s. A key over its limit is then
 * remembered here until its window ends and refused from memory, so a flood costs at most `limit + 1` upserts
 * per key, window and server.
 * Keys are stored as SHA-256 hashes, not as the address or email they count (pseudonymised: a given address or
 * email can still be checked against them), and only until their window has ended and a sweep has run.
 */
export class SharedRateLimiter {
  /** Hashed keys this process saw over their limit. */
  private readonly full = new FullKeys();

  constructor(
    private readonly store: Pick<Store, "countHit">,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one hit on `key`; over the limit it throws 429 with the seconds until the key's window resets. */
  async take(key: string, rule: RateRule): Promise<void> {
    const now = this.now();
    const hashed = sha256Hex(key);
    this.full.refuseIfFull(hashed, now);
    const { count, resetAt } = await this.store.countHit(hashed, rule.windowMs, now);
    if (count <= rule.limit) return;
    this.full.mark(hashed, resetAt);
    throw tooManyRequests(secondsUntil(resetAt, now));
  }
}

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

/** How long a SyncedRateLimiter gathers its process's hits before adding them to the store's count. */
const SYNC_EVERY_MS = 1_000;

/** Where a SyncedRateLimiter tells the other servers that a key's shared window is full. */
const FULL_CHANNEL = "rate-limits:full";

/**
 * Limits of busy paths shared by every server to within about a second of each server's calls: each process
 * counts its own calls exactly (a RateLimiter, the first gate), and a second after a call adds what it let
 * through to the store's window for the key (`Store.countHit` with the number of hits). The process that finds
 * the window full announces it, and every server refuses the key from memory until that window ends. So the
 * check stays synchronous and costs no write per call; behind N servers a key gets its limit plus at most what
 * the others let through in the second or so before they heard, instead of N times the limit. No timer runs
 * while nothing is called. A failed addition (the store unreachable) leaves each process to its own count (then
 * N times the limit). Keys are announced as given: they must not be secrets (a key's id, not the key).
 */
export class SyncedRateLimiter {
  private readonly local: RateLimiter;
  /** Hits let through since the last addition, by key. */
  private pending = new Map<string, { hits: number; rule: RateRule }>();
  /** Keys whose shared window is full. */
  private readonly full = new FullKeys();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly unlisten: () => void;

  constructor(
    private readonly store: Pick<Store, "countHit" | "write" | "listen" | "committed">,
    private readonly now: () => number = Date.now,
    private readonly syncMs = SYNC_EVERY_MS,
  ) {
    this.local = new RateLimiter(now);
    this.unlisten = store.listen(FULL_CHANNEL, (payload) => {
      const heard = parseFull(payload);
      // The end is the announcing server's clock: held to one window from now on this one's, whatever that clock says.
      if (heard) this.full.mark(heard.key, Math.min(heard.until, this.now() + heard.windowMs));
    });
  }

  /** Counts one hit on `key`; over the limit (this process's count, or all servers' as last heard) it throws 429. */
  take(key: string, rule: RateRule): void {
    this.full.refuseIfFull(key, this.now());
    this.local.take(key, rule);
    const pending = this.pending.get(key);
    if (pending) pending.hits++;
    else this.pending.set(key, { hits: 1, rule });
    if (this.timer === undefined) {
      // Outside any store transaction of the caller's flow (the addition is a write of its own).
      void this.store.committed(async () => {
        this.timer = setTimeout(() => void this.sync(), this.syncMs);
        this.timer.unref?.();
      });
    }
  }

  /** Adds the hits let through to the store's windows; a window found full is announced to every server. */
  async sync(): Promise<void> {
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    const now = this.now();
    await Promise.all(
      [...batch].map(async ([key, { hits, rule }]) => {
        try {
          const { count, resetAt } = await this.store.countHit(sha256Hex(key), rule.windowMs, now, hits);
          if (count < rule.limit) return;
          this.full.mark(key, resetAt);
          // Announced once per window: by the process whose hits filled it.
          if (count - hits < rule.limit) await this.store.write(async (tx) => tx.announce(FULL_CHANNEL, JSON.stringify({ key, until: resetAt, windowMs: rule.windowMs })));
        } catch {
          // The store unreachable: this process's own count still holds.
        }
      }),
    );
  }

  /** Adds what is pending (so a server that stops hands its last second's hits on), then stops. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.unlisten();
    await this.sync();
  }
}

function parseFull(payload: string): { key: string; until: number; windowMs: number } | undefined {
  try {
    const { key, until, windowMs } = JSON.parse(payload) as { key?: unknown; until?: unknown; windowMs?: unknown };
    return typeof key === "string" && typeof until === "number" && typeof windowMs === "number" ? { key, until, windowMs } : undefined;
  } catch {
    // RESYNC, or nothing of ours.
    return undefined;
  }
}
