import { tooManyRequests } from "./errors";

/** At most `limit` hits per `windowMs` per key. */
export type RateRule = { limit: number; windowMs: number };

/** How often expired windows are dropped when no rule says (the longest window of the rules in use is typical). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Fixed-window counters in memory, for one server process: the limits
 * protect unauthenticated and public endpoints (sign-in links, device
 * codes, the public intake), so losing them on a restart is harmless.
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
    if (window.count >= rule.limit) throw tooManyRequests(Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
    window.count++;
  }
}
