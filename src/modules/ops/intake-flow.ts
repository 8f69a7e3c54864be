import type { AuditActor } from "../../lib/audit";
import { ApiError } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { type Tx, isBusyError, isPostgresUnavailable } from "../../lib/store";
import { parseDomain } from "../projects/service";
import { closedToPublic, insertQueueItem } from "./items";
import { activeIntakeItemByTitle, intakeDomainExists, intakeSettings } from "./store";
import { DEFAULT_PRIORITY, type FiledType, type IntakeInput, type IntakeJob, type IntakeResult, checkText, checkTitle, lockScope, titleKey } from "./types";

/** Most intake filings decided in one transaction. */
const INTAKE_BATCH_MAX = 128;

/** The store cannot take writes now (busy SQLite file, unreachable PostgreSQL): retrying each filing would only wait longer. */
function isUnavailable(err: unknown): boolean {
  return (err instanceof ApiError && err.code === "UNAVAILABLE") || isBusyError(err) || isPostgresUnavailable(err);
}

/**
 * Runs submitted jobs in batches, one batch at a time: what arrives while a
 * batch runs goes into the next. `run` answers one result per job (an
 * Error rejects that job alone) or throws (every job of the batch rejects).
 */
export class Batcher<J, R> {
  private queue: { job: J; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly max: number,
    private readonly run: (jobs: J[]) => Promise<(R | Error)[]>,
  ) {}

  submit(job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      if (this.running) return;
      this.running = true;
      // After the I/O of this turn of the event loop: the requests read in it join this batch.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.max);
        try {
          const results = await this.run(batch.map((b) => b.job));
          batch.forEach((b, i) => {
            const r = results[i];
            if (r instanceof Error) b.reject(r);
            else b.resolve(r as R);
          });
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
}

/** The public intake: filing (batched, deduplicated by title) and the project settings and origins the routes check. */
export class IntakeFlow {
  constructor(private readonly ctx: ServiceContext) {}

  /**
   * The public intake (POST /ops/bug, /ops/feature-request; the routes have
   * checked the key, its scope, the project's opt-in and the limits): a new
   * item pending approval, or, when an item filed through the intake and
   * still open (pending approval, open or in progress) has the same title
   * (case and whitespace aside), that item's number and nothing filed.
   * Items people or svc filed are never matched: the answer must not tell
   * the public whether an internal item exists. Decided under the project's ops
   * lock, so concurrent repeats file exactly one.
   */
  async intake(projectId: string, type: FiledType, input: IntakeInput, actor: AuditActor): Promise<IntakeResult> {
    const title = checkTitle(input.title);
    const job: IntakeJob = {
      projectId,
      type,
      title,
      stepsToReproduce: type === "bug" ? checkText("stepsToReproduce", input.stepsToReproduce) : null,
      actualResult: type === "bug" ? checkText("actualResult", input.actualResult) : null,
      expectedResult: type === "bug" ? checkText("expectedResult", input.expectedResult) : null,
      useCase: type === "feature_request" ? checkText("useCase", input.useCase) : null,
      actor,
    };
    return this.intakeBatches.submit(job);
  }

  /**
   * Group commit of the intake: filings that arrive while a transaction is
   * committing are decided together in the next one (each under its
   * project's lock, taken in project order; each sees the ones before it,
   * so dedupe holds inside a batch too). Every caller is answered after the
   * commit that holds its item. A batch that fails for another reason than
   * an unavailable store is retried one filing per transaction, so one bad
   * filing fails alone.
   */
  private readonly intakeBatches = new Batcher<IntakeJob, IntakeResult>(INTAKE_BATCH_MAX, async (jobs) => {
    try {
      return await this.ctx.store.write((tx) => this.fileIntakeJobs(tx, jobs));
    } catch (err) {
      if (jobs.length === 1 || isUnavailable(err)) throw err;
      return Promise.all(jobs.map((job) => this.ctx.store.write((tx) => this.fileIntakeJobs(tx, [job])).then((r) => r[0]!, (e: unknown) => e as Error)));
    }
  });

  private async fileIntakeJobs(tx: Tx, jobs: IntakeJob[]): Promise<(IntakeResult | Error)[]> {
    const order = jobs.map((job, i) => ({ job, i })).sort((a, b) => (a.job.projectId < b.job.projectId ? -1 : a.job.projectId > b.job.projectId ? 1 : a.i - b.i));
    const results: (IntakeResult | Error)[] = new Array(jobs.length);
    let locked: string | null = null;
    let open = false;
    for (const { job, i } of order) {
      if (job.projectId !== locked) {
        await tx.lock(lockScope(job.projectId));
        locked = job.projectId;
        // The routes checked the opt-in from a cache that may be a second old: the transaction decides.
        open = Number((await intakeSettings(tx, job.projectId))?.public_ticket_creation) === 1;
      }
      if (!open) {
        results[i] = closedToPublic();
        continue;
      }
      const existing = await activeIntakeItemByTitle(tx, job.projectId, titleKey(job.title));
      if (existing) {
        results[i] = { created: false, number: Number(existing.number) };
        continue;
      }
      const item = await insertQueueItem(tx, job.projectId, {
        type: job.type,
        status: "pending_approval",
        priority: DEFAULT_PRIORITY,
        title: job.title,
        stepsToReproduce: job.stepsToReproduce,
        actualResult: job.actualResult,
        expectedResult: job.expectedResult,
        useCase: job.useCase,
        source: "intake",
        sourceRef: null,
        actor: job.actor,
      });
      results[i] = { created: true, id: item.id, number: item.number };
    }
    return results;
  }

  /**
   * The project's intake settings, for the routes: FORBIDDEN unless it takes
   * public tickets; answers the browser origin its pages have (null: no
   * domain set).
   */
  async intakeProject(projectId: string): Promise<{ origin: string | null }> {
    const settings = await intakeSettings(this.ctx.store, projectId);
    if (!settings || Number(settings.public_ticket_creation) !== 1) throw closedToPublic();
    return { origin: settings.domain ? parseDomain(settings.domain).origin : null };
  }

  /** Whether a browser origin is the domain of some project that takes public tickets (CORS preflights carry no key). */
  async isIntakeOrigin(origin: string): Promise<boolean> {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== origin.toLowerCase()) return false;
    // A domain stored as a bare host means https on the default port (projects' parseDomain).
    const domains = url.protocol === "https:" ? [url.origin, url.host] : [url.origin];
    return intakeDomainExists(this.ctx.store, domains);
  }
}
