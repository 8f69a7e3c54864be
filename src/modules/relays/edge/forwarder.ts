import { DELIVERY_HEADER } from "../../../lib/deliveries";
import { unavailable } from "../../../lib/errors";
import type { Logger } from "../../../lib/log";
import type { RelayDisk } from "./disk";

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 30_000;
/** One delivery attempt may take this long before it is tried again (the upstream then answers the repeat from its record). */
const ATTEMPT_TIMEOUT_MS = 30_000;
/** Requests queued at most (SERVICE_RELAY_QUEUE_MAX): beyond, forwarded paths answer 503 with Retry-After. */
export const DEFAULT_QUEUE_MAX = 100_000;

/**
 * Forwards queued requests (events, errors, the public intake, OFREP exposures) to the upstream one at a
 * time, oldest first, each with its `X-Svc-Delivery-Id`, retrying with backoff while the upstream is away or
 * busy; a request leaves the queue only once the upstream answered it. The upstream records each delivery
 * id's answer (src/lib/deliveries.ts), so a request sent again after a lost answer is stored once.
 * An answer of 4xx other than 408 and 429 is final (the request is wrong, not the moment): it is dropped
 * and counted, and the relay's log says why.
 */
export class Forwarder {
  private stopped = false;
  private wake: (() => void) | undefined;
  /** What the loop sleeps for now: an empty queue (any new item wakes it) or a backoff (only the upstream's return does). */
  private sleeping: "idle" | "backoff" | undefined;
  /** The upstream was heard since the last attempt: retry at once, from the shortest delay. */
  private upstreamBack = false;
  private depth: number;
  private loop: Promise<void> | undefined;
  private inFlight: AbortController | undefined;
  readonly counts = { delivered: 0, rejected: 0, retried: 0 };

  constructor(
    private readonly deps: { disk: RelayDisk; upstream: string; log: Logger; queueMax?: number; now?: () => number; hello?: Record<string, string> },
  ) {
    this.depth = deps.disk.depth();
  }

  queued(): number {
    return this.depth;
  }

  /** Age in seconds of the oldest queued request (0 when the queue is empty). */
  oldestAgeSeconds(): number {
    const oldest = this.deps.disk.oldest();
    return oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
  }

  /** Queues a request durably (on disk when this returns); 503 when the queue is full. */
  enqueue(id: string, path: string, headers: Record<string, string>, body: Uint8Array): void {
    if (this.depth >= (this.deps.queueMax ?? DEFAULT_QUEUE_MAX)) throw unavailable(30);
    this.deps.disk.enqueue(id, path, headers, body, Date.now());
    this.depth = this.deps.disk.depth();
    // A new item does not cut a backoff short: while the upstream is away, every arrival would be an attempt.
    if (this.sleeping === "idle") this.wakeUp();
  }

  /** The upstream is back (a stream opened): the queue is tried at once, from the shortest delay. */
  kick(): void {
    this.upstreamBack = true;
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.inFlight?.abort();
    this.wakeUp();
    await this.loop;
  }

  private async sleep(ms: number, why: "idle" | "backoff"): Promise<void> {
    if (this.stopped || (why === "backoff" && this.upstreamBack)) return;
    this.sleeping = why;
    await new Promise<void>((done) => {
      const timer = setTimeout(done, ms);
      this.wake = () => {
        clearTimeout(timer);
        done();
      };
    });
    this.sleeping = undefined;
  }

  private async run(): Promise<void> {
    let delay = RETRY_MIN_MS;
    while (!this.stopped) {
      const item = this.deps.disk.next();
      if (!item) {
        await this.sleep(60_000, "idle");
        continue;
      }
      if (this.upstreamBack) {
        this.upstreamBack = false;
        delay = RETRY_MIN_MS;
      }
      let retryAfterMs: number | undefined;
      const attempt = new AbortController();
      this.inFlight = attempt;
      const timer = setTimeout(() => attempt.abort(), ATTEMPT_TIMEOUT_MS);
      try {
        const res = await fetch(`${this.deps.upstream}${item.path}`, {
          method: "POST",
          // The relay's own X-Svc-Relay, never a downstream relay's (FORWARDED_HEADERS does not keep it): each upstream sees its direct relays.
          headers: { ...item.headers, ...this.deps.hello, [DELIVERY_HEADER]: item.id },
          body: item.body as Uint8Array<ArrayBuffer>,
          signal: attempt.signal,
        });
        const text = await res.text().catch(() => "");
        if (res.ok || (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429)) {
          if (!res.ok) {
            this.counts.rejected++;
            this.deps.log.warn("relay: the upstream refused a forwarded request; it is dropped", { path: item.path, status: res.status, answer: text.slice(0, 500), deliveryId: item.id });
          } else this.counts.delivered++;
          this.deps.disk.remove(item.seq);
          this.depth = Math.max(0, this.depth - 1);
          delay = RETRY_MIN_MS;
          continue;
        }
        const retryAfter = Number(res.headers.get("retry-after"));
        if (Number.isFinite(retryAfter) && retryAfter > 0) retryAfterMs = Math.min(RETRY_MAX_MS, retryAfter * 1000);
        throw new Error(`the upstream answered ${res.status}`);
      } catch (err) {
        if (this.stopped) break;
        this.counts.retried++;
        this.deps.disk.attempted(item.seq);
        if (item.attempts === 0) this.deps.log.warn("relay: forwarding failed; kept on disk and retried", { path: item.path, error: String(err), queued: this.depth });
      } finally {
        clearTimeout(timer);
        this.inFlight = undefined;
      }
      await this.sleep(retryAfterMs ?? delay * (0.5 + Math.random() / 2), "backoff");
      delay = Math.min(RETRY_MAX_MS, delay * 2);
    }
  }
}
