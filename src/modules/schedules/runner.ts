import type { ServiceContext } from "../../lib/module";

/**
 * The schedules' runner: every server runs one, every `everyMs` (never when 0 or less: tests call
 * `schedules.runDue`). Unlike the rollouts monitor it takes no lease: each due step is claimed in its own
 * transaction (service.runStep), so the servers share the work, and a step is still run exactly once, by
 * whichever claims it. Rounds never overlap, none starts once the server shuts down, and the timer never
 * keeps the process up.
 */
export class ScheduleRunner {
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly ctx: Pick<ServiceContext, "shutdown" | "log">,
    everyMs: number,
    private readonly round: () => Promise<unknown>,
  ) {
    if (everyMs > 0) {
      this.timer = setInterval(() => void this.tick(), everyMs);
      this.timer.unref?.();
    }
  }

  private async tick(): Promise<void> {
    if (this.running || this.ctx.shutdown.aborted) return;
    const run = this.round().catch((err) => this.ctx.log.warn("scheduled changes round failed; retrying at the next round", { error: String(err) }));
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
