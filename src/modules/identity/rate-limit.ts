import { tooManyRequests } from "../../lib/errors";

export type RateRule = { limit: number; windowMs: number };

const PRUNE_ABOVE = 10_000;

/**
 * Fixed-window counters kept in memory: the limits protect the
 * unauthenticated endpoints of one server process, so losing them on a
 * restart is harmless.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly now: () => number) {}

  /** Counts one hit on `key`; over the limit it throws 429 with the seconds until the window resets. */
  take(key: string, rule: RateRule): void {
    const now = this.now();
    if (this.windows.size > PRUNE_ABOVE) {
      for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
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
