import { runApproved } from "../../lib/approvals";
import { type AuditActor, recordAudit } from "../../lib/audit";
import { type ChangeDescription, type ChangeRegistry, type ParsedChange, type StoredChange, dryRun } from "../../lib/changes";
import { ApiError, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Tx } from "../../lib/store";
import { ScheduleRunner } from "./runner";
import { type ScheduleRow, type StepRow, cancelPending, dueSteps, findSchedule, insertSchedule, insertStep, markDone, markFailed, schedulesOf, setScheduleState, stepsOf } from "./store";
import { ACTIONS, AHEAD_MAX_MS, type CreateInput, LATE_GRACE_MS, LIST_MAX, PAST_GRACE_MS, SCHEDULES_EVERY_MS, STATES, STEPS_MAX, type Schedule, type Step, type StepState } from "./types";

export { type Schedule, type Step, STATES, STEPS_MAX };

/** What one round did to one step (tests read it). */
export type StepOutcome = { scheduleId: string; step: number; outcome: "done" | "failed" | "skipped"; lateByMs?: number; error?: string };

/** A schedule's state from its steps': pending while any is; else failed if any failed, cancelled if any was, done. */
function stateOf(states: StepState[]): StepState {
  if (states.includes("pending")) return "pending";
  if (states.includes("failed")) return "failed";
  if (states.includes("cancelled")) return "cancelled";
  return "done";
}

/** `3 min 5 s`, for the late note. */
function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const h = Math.floor(m / 60);
  return `${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
}

/** The note of a step that ran late, in its audit row and the dashboard. */
export function lateNote(lateByMs: number): string {
  return `ran ${duration(lateByMs)} late: no server was running at its time`;
}

/**
 * Scheduled changes: any publishable change (src/lib/changes.ts) at a time, alone or as a ramp of steps,
 * checked when scheduled, run once across every server by the runner (runner.ts), cancellable while pending.
 * Each step is claimed and applied in one transaction with its audit row: a server killed mid-step leaves it
 * pending for another; a step whose time passed while no server ran runs late and says so.
 */
export class SchedulesService {
  readonly runner: ScheduleRunner;
  readonly everyMs: number;

  constructor(private readonly ctx: ServiceContext) {
    this.everyMs = ctx.options.schedulesEveryMs ?? SCHEDULES_EVERY_MS;
    this.runner = new ScheduleRunner(ctx, this.everyMs, () => this.runDue(this.now()));
  }

  private now(): number {
    return this.ctx.services.analytics.now();
  }

  private get changes(): ChangeRegistry {
    if (!this.ctx.changes) throw new Error("no change registry: services built without createServices");
    return this.ctx.changes;
  }

  async create(projectId: string, input: CreateInput, actor: AuditActor): Promise<Schedule> {
    const single = input.change !== undefined || input.runAt !== undefined;
    if (single && input.steps !== undefined) throw validation("Send either change and runAt, or steps", "steps: not with change and runAt");
    const raw = single ? [{ change: input.change, runAt: input.runAt, field: "" }] : (input.steps ?? []).map((s, i) => ({ ...s, field: `steps[${i}].` }));
    if (raw.length === 0) throw validation("Nothing to schedule", single ? "change: required" : "steps: at least one, or change and runAt");
    if (raw.length > STEPS_MAX) throw validation(`At most ${STEPS_MAX} steps`, `steps: at most ${STEPS_MAX}`);
    const now = this.now();
    let previous = Number.NEGATIVE_INFINITY;
    const steps: { parsed: ParsedChange; runAt: string; field: string; description: ChangeDescription }[] = [];
    for (const { change, runAt, field } of raw) {
      if (change === undefined) throw validation("A change is required", `${field}change: required`);
      const at = this.parseRunAt(runAt, `${field}runAt`, now);
      if (at < previous) throw validation("A ramp's steps run in order: each runAt at or after the one before", `${field}runAt: before the previous step's`);
      previous = at;
      const parsed = await this.changes.parse(change, `${field}change`);
      steps.push({ parsed, runAt: new Date(at).toISOString(), field, description: parsed.kind.describe(projectId, parsed.body) });
    }
    const id = newId("sch");
    for (const s of steps) {
      await this.changes.requireApproval({ projectId, change: s.parsed.change, description: s.description, actor, phase: "schedule", holder: { type: "schedule", id } });
    }
    // Checked now rather than failing at its time: every step applied in order in one rolled-back transaction.
    let checking = steps[0]!;
    try {
      // As the approved path: requireApproval above is this change's approval check, not the direct-publish guard.
      await dryRun(this.ctx.store, () =>
        runApproved(async () => {
          for (const s of steps) {
            checking = s;
            await s.parsed.kind.apply(projectId, s.parsed.body, actor);
          }
        }),
      );
    } catch (err) {
      // Unavailable keeps its exact shape ({error: "Unavailable"} with Retry-After): only refusals name their step.
      if (err instanceof ApiError && err.code !== "UNAVAILABLE" && steps.length > 1) throw new ApiError(err.code, `Step ${steps.indexOf(checking) + 1}: ${err.message}`, `${checking.field}change: ${err.detail ?? err.message}`, err.status);
      throw err;
    }
    const summary = steps.length === 1 ? steps[0]!.description.summary : `${steps.length} steps: ${steps.map((s) => s.description.summary).join(" → ")}`;
    const createdAt = nowIso();
    await this.ctx.store.write(async (tx) => {
      await insertSchedule(tx, { id, project_id: projectId, state: "pending", summary: summary.slice(0, 2000), created_by: actor.email, created_at: createdAt, updated_at: createdAt });
      for (const [i, s] of steps.entries()) {
        await insertStep(tx, { schedule_id: id, step: i + 1, project_id: projectId, change: JSON.stringify(s.parsed.change), summary: s.description.summary, run_at: s.runAt });
      }
      // Each step takes the approved request it needs (checked above) in this transaction: one approval, one schedule.
      for (const s of steps) {
        await this.changes.requireApproval({ projectId, change: s.parsed.change, description: s.description, actor, phase: "hold", holder: { type: "schedule", id }, tx });
      }
      const first = steps[0]!.description;
      await recordAudit(tx, {
        projectId,
        action: ACTIONS.create,
        subjectId: id,
        subjectName: first.target.name,
        env: first.env ?? undefined,
        actor,
        detail: { steps: steps.map((s) => ({ kind: s.parsed.change.kind, summary: s.description.summary, runAt: s.runAt })) },
      });
    });
    return this.get(projectId, id);
  }

  private parseRunAt(text: string | undefined, field: string, now: number): number {
    if (text === undefined) throw validation("runAt is required", `${field}: required (an ISO 8601 time with its zone, e.g. 2026-12-01T09:00:00Z)`);
    // A zone is required: a bare local time means something else on every machine.
    const at = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) && /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
    if (!Number.isFinite(at)) throw validation("runAt is not a time", `${field}: expected an ISO 8601 time with its zone, e.g. 2026-12-01T09:00:00Z`);
    if (at < now - PAST_GRACE_MS) throw validation("runAt is in the past", `${field}: ${text} is before now (${new Date(now).toISOString()}); publish the change directly instead`);
    if (at > now + AHEAD_MAX_MS) throw validation("runAt is too far ahead", `${field}: at most a year ahead`);
    return at;
  }

  async list(projectId: string, query: { q?: string; state?: string } = {}): Promise<Schedule[]> {
    const state = query.state;
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw validation("Unknown state", `state: expected one of ${STATES.join(", ")}`);
    const rows = await schedulesOf(this.ctx.store, projectId, state as StepState | undefined, LIST_MAX);
    const matching = filterByQuery(rows, query.q, (r) => [r.id, r.summary, r.created_by]);
    return this.load(matching);
  }

  async get(projectId: string, idOrPrefix: string): Promise<Schedule> {
    const row = await findSchedule(this.ctx.store, projectId, idOrPrefix);
    if (!row) throw notFound(`Schedule ${idOrPrefix} not found`);
    return (await this.load([row]))[0]!;
  }

  /** Cancels the pending steps; steps that ran stay as they are. VALIDATION when none is pending. */
  async cancel(projectId: string, idOrPrefix: string, actor: AuditActor): Promise<Schedule> {
    const id = await this.ctx.store.write(async (tx) => {
      const found = await findSchedule(tx, projectId, idOrPrefix);
      if (!found) throw notFound(`Schedule ${idOrPrefix} not found`);
      // The runner takes the same lock before it claims a step: a step is either run or cancelled, never both.
      await tx.lock(`schedule:${found.id}`);
      const cancelled = await cancelPending(tx, found.id, null);
      if (cancelled.length === 0) throw validation(`Schedule ${found.id} has no pending steps`, `id: ${found.state}; only pending steps can be cancelled`);
      await this.changes.releaseApprovals({ tx, projectId, holder: { type: "schedule", id: found.id }, actor });
      await this.settle(tx, found.id);
      await recordAudit(tx, { projectId, action: ACTIONS.cancel, subjectId: found.id, actor, detail: { steps: cancelled } });
      return found.id;
    });
    return this.get(projectId, id);
  }

  /** One round as of `nowMs`: every due step, oldest first, each in its own transaction. */
  async runDue(nowMs: number): Promise<StepOutcome[]> {
    const outcomes: StepOutcome[] = [];
    // A ramp's next step becomes due only once the one before has finished: loop until nothing more is due.
    for (let round = 0; round < STEPS_MAX + 1 && !this.ctx.shutdown.aborted; round++) {
      const due = await dueSteps(this.ctx.store, new Date(nowMs).toISOString(), 100);
      if (due.length === 0) break;
      let progressed = false;
      for (const d of due) {
        if (this.ctx.shutdown.aborted) break;
        const outcome = await this.runStep(d.project_id, d.schedule_id, Number(d.step), nowMs);
        outcomes.push(outcome);
        if (outcome.outcome !== "skipped") progressed = true;
      }
      if (!progressed) break;
    }
    return outcomes;
  }

  /**
   * Claims one step and applies it in ONE transaction with its audit row: the claim (pending → done) and the
   * change commit together or not at all, so a server killed mid-step leaves it pending, and of several servers
   * racing for it exactly one claims it (the lock, then `WHERE state = 'pending'`). A change the module refuses
   * (an ApiError: the gate was deleted, the value no longer fits the schema) fails the step, with the error, and
   * cancels the steps after it; anything else (the store unavailable) leaves it pending for the next round.
   */
  async runStep(projectId: string, scheduleId: string, step: number, nowMs: number): Promise<StepOutcome> {
    const base = { scheduleId, step };
    let timing = { ranAt: "", lateByMs: 0, late: false };
    try {
      const ran = await this.ctx.store.write(async (tx) => {
        await tx.lock(`schedule:${scheduleId}`);
        const rows = await stepsOf(tx, [scheduleId]);
        const row = rows.find((r) => Number(r.step) === step);
        if (!row || row.state !== "pending" || rows.some((r) => Number(r.step) < step && r.state === "pending")) return false;
        timing = this.timing(row, nowMs);
        if ((await markDone(tx, scheduleId, step, timing.ranAt, timing.lateByMs, timing.late)) === 0) return false;
        const schedule = (await findSchedule(tx, projectId, scheduleId))!;
        const parsed = this.changes.of(JSON.parse(row.change) as StoredChange);
        const description = parsed.kind.describe(projectId, parsed.body);
        const actor = this.actorOf(schedule);
        await this.changes.requireApproval({ projectId, change: parsed.change, description, actor, phase: "apply", holder: { type: "schedule", id: scheduleId }, tx });
        const before = await parsed.kind.fingerprint(tx, projectId, parsed.body);
        // Approved ahead (requireApproval when it was scheduled): the scheduler passes the direct-publish guard.
        await runApproved(() => parsed.kind.apply(projectId, parsed.body, actor));
        const after = await parsed.kind.fingerprint(tx, projectId, parsed.body);
        await this.settle(tx, scheduleId);
        const detail: Record<string, unknown> = { step, of: rows.length, kind: parsed.change.kind, summary: description.summary, runAt: row.run_at, lateByMs: timing.lateByMs, before, after };
        if (timing.late) {
          detail.late = true;
          detail.note = lateNote(timing.lateByMs);
        }
        await recordAudit(tx, { projectId, action: ACTIONS.run, subjectId: scheduleId, subjectName: description.target.name, env: description.env ?? undefined, actor, detail });
        return true;
      });
      if (!ran) return { ...base, outcome: "skipped" };
      if (timing.late) this.ctx.log.warn("scheduled step ran late", { projectId, scheduleId, step, lateByMs: timing.lateByMs });
      return { ...base, outcome: "done", lateByMs: timing.lateByMs };
    } catch (err) {
      // Unavailable (503) and Too many requests (429) say "later", not "never".
      if (!(err instanceof ApiError) || err.status >= 500 || err.status === 429) {
        this.ctx.log.warn("scheduled step could not run; retrying at the next round", { projectId, scheduleId, step, error: err instanceof Error ? err.message : String(err) });
        return { ...base, outcome: "skipped", error: String(err) };
      }
      const error = err.detail ? `${err.message} (${err.detail})` : err.message;
      const failed = await this.fail(projectId, scheduleId, step, nowMs, error);
      return failed ? { ...base, outcome: "failed", error } : { ...base, outcome: "skipped" };
    }
  }

  /** Marks a step failed with its error and cancels the steps after it (a ramp does not go on past a failed step). */
  private fail(projectId: string, scheduleId: string, step: number, nowMs: number, error: string): Promise<boolean> {
    return this.ctx.store.write(async (tx) => {
      await tx.lock(`schedule:${scheduleId}`);
      const row = (await stepsOf(tx, [scheduleId])).find((r) => Number(r.step) === step);
      if (!row || row.state !== "pending") return false;
      const timing = this.timing(row, nowMs);
      if ((await markFailed(tx, scheduleId, step, timing.ranAt, timing.lateByMs, timing.late, error.slice(0, 2000))) === 0) return false;
      const cancelled = await cancelPending(tx, scheduleId, `not run: step ${step} failed`, step);
      await this.settle(tx, scheduleId);
      const schedule = (await findSchedule(tx, projectId, scheduleId))!;
      // The failed step's request and those of the steps cancelled after it are plain approved again.
      await this.changes.releaseApprovals({ tx, projectId, holder: { type: "schedule", id: scheduleId }, actor: this.actorOf(schedule) });
      await recordAudit(tx, { projectId, action: ACTIONS.fail, subjectId: scheduleId, actor: this.actorOf(schedule), detail: { step, error, lateByMs: timing.lateByMs, cancelled } });
      this.ctx.log.warn("scheduled step failed", { projectId, scheduleId, step, error });
      return true;
    });
  }

  private timing(row: StepRow, nowMs: number) {
    const lateByMs = Math.max(0, nowMs - Date.parse(row.run_at));
    return { ranAt: new Date(nowMs).toISOString(), lateByMs, late: lateByMs > this.everyMs + LATE_GRACE_MS };
  }

  /** Steps run as the person who scheduled them, marked as a schedule's (audit rows and published versions say so). */
  private actorOf(schedule: ScheduleRow): AuditActor {
    return { email: schedule.created_by, type: "schedule" };
  }

  /** Sets the schedule's state from its steps' (in the caller's transaction). */
  private async settle(tx: Tx, scheduleId: string): Promise<void> {
    const rows = await stepsOf(tx, [scheduleId]);
    await setScheduleState(tx, scheduleId, stateOf(rows.map((r) => r.state)), nowIso());
  }

  private async load(rows: ScheduleRow[]): Promise<Schedule[]> {
    const steps = await stepsOf(this.ctx.store, rows.map((r) => r.id));
    const byId = new Map<string, Step[]>();
    for (const s of steps) {
      const list = byId.get(s.schedule_id) ?? [];
      list.push(this.toStep(s));
      byId.set(s.schedule_id, list);
    }
    return rows.map((r) => {
      const list = byId.get(r.id) ?? [];
      return {
        id: r.id,
        state: r.state,
        summary: r.summary,
        createdBy: r.created_by,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        nextRunAt: list.find((s) => s.state === "pending")?.runAt ?? null,
        steps: list,
      };
    });
  }

  private toStep(s: StepRow): Step {
    const change = JSON.parse(s.change) as StoredChange;
    let parsed: ParsedChange | undefined;
    try {
      parsed = this.changes.of(change);
    } catch {
      parsed = undefined;
    }
    const description = parsed?.kind.describe(s.project_id, parsed.body);
    return {
      step: Number(s.step),
      change,
      kind: change.kind,
      target: description?.target ?? { type: change.kind.split(".")[0]!, name: String(change.name ?? "") },
      env: description?.env ?? null,
      summary: s.summary,
      runAt: s.run_at,
      state: s.state,
      ranAt: s.ran_at,
      lateByMs: s.late_by_ms === null ? null : Number(s.late_by_ms),
      late: Number(s.late) === 1,
      error: s.error,
    };
  }

  close(): Promise<void> {
    return this.runner.close();
  }
}
