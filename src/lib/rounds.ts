import type { ServiceContext } from "./module";

/**
 * A job run every `everyMs` (never when 0 or less) on one server at a time:
 * each round first takes the lease `lease`, which ends just before the
 * holder's next round, so one server runs per interval. Rounds never overlap
 * (a tick while one runs is skipped), none starts once the server shuts
 * down, and a failed round is logged as `failure` and retried at the next.
 * The timer never keeps the process up.
 */
export class LeasedRounds {
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly ctx: Pick<ServiceContext, "store" | "shutdown" | "log">,
    private readonly lease: string,
    private readonly everyMs: number,
    private readonly round: () => Promise<unknown>,
    private readonly failure: string,
  ) {
    if (everyMs > 0) {
      this.timer = setInterval(() => void this.tick(), everyMs);
      this.timer.unref?.();
    }
  }

  private async tick(): Promise<void> {
    if (this.running || this.ctx.shutdown.aborted) return;
    const run = (async () => {
      try {
        if (!(await this.ctx.store.lease(this.lease, Math.max(1000, this.everyMs * 0.9)))) return;
        await this.round();
      } catch (err) {
        this.ctx.log.warn(this.failure, { error: String(err) });
      }
    })();
    this.running = run;
    await run;
    this.running = undefined;
  }

  /** Stops the timer and waits for a round in progress. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

/** Who hears an event beside the server log (connectors, tests): added and removed at any time. */
export class Notifiers<E> {
  private readonly list: ((event: E) => void | Promise<void>)[] = [];

  /** Adds one; answers its removal. */
  add(fn: (event: E) => void | Promise<void>): () => void {
    this.list.push(fn);
    return () => {
      const at = this.list.indexOf(fn);
      if (at >= 0) this.list.splice(at, 1);
    };
  }

  /** Tells each in turn; one that fails is handed to `failed` (to log), and the rest still hear it. */
  async notify(event: E, failed: (err: unknown) => void): Promise<void> {
    for (const fn of [...this.list]) {
      try {
        await fn(event);
      } catch (err) {
        failed(err);
      }
    }
  }
}
