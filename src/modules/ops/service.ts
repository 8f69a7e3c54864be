import { type AuditActor, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { ApiError, forbidden, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import { type Queryable, type Tx, isBusyError, isPostgresUnavailable } from "../../lib/store";
import { parseDomain } from "../projects/service";
import {
  type OpsItemRow,
  activeIntakeItemByTitle,
  insertItem,
  intakeDomainExists,
  intakeSettings,
  itemById,
  itemByNumber,
  itemsOfProject,
  latestItemFor,
  nextNumber,
  updateItem,
} from "./store";

export const ITEM_TYPES = ["bug", "feature_request", "error", "alert"] as const;
export type ItemType = (typeof ITEM_TYPES)[number];
/** What people (POST /api/admin/ops) and the public intake file; `error` and `alert` items are filed by the platform only. */
export const FILED_TYPES = ["bug", "feature_request"] as const satisfies readonly ItemType[];
export type FiledType = (typeof FILED_TYPES)[number];

export const STATUSES = ["pending_approval", "open", "in_progress", "done", "rejected"] as const;
export type Status = (typeof STATUSES)[number];

/** Highest first. `high` and `nice_to_have` are the spec's; `medium` (the default) and `low` complete the scale. */
export const PRIORITIES = ["high", "medium", "low", "nice_to_have"] as const;
export type Priority = (typeof PRIORITIES)[number];
export const DEFAULT_PRIORITY: Priority = "medium";

export const SOURCES = ["admin", "intake", "platform"] as const;
export type Source = (typeof SOURCES)[number];

/**
 * Where a person may move an item from each status. Approval is
 * pending_approval → open (or rejected); then open → in_progress → done,
 * with open → done and in_progress → open (back to the backlog) for work
 * that went otherwise, open → rejected (won't do), and done → open
 * (reopen). rejected is final. Setting the current status again changes
 * nothing. The platform also reopens a done error/alert item when its error
 * regresses or its alert fires again.
 */
export const TRANSITIONS: Record<Status, readonly Status[]> = {
  pending_approval: ["open", "rejected"],
  open: ["in_progress", "done", "rejected"],
  in_progress: ["open", "done"],
  done: ["open"],
  rejected: [],
};

export const TITLE_MAX = 200;
export const TEXT_MAX = 10_000;

export const ACTIONS = {
  create: "ops.create",
  update: "ops.update",
  approve: "ops.approve",
  reject: "ops.reject",
  recur: "ops.recur",
  reopen: "ops.reopen",
} as const;

/** A queue item as the API shows it. */
export type QueueItem = {
  id: string;
  number: number;
  type: ItemType;
  status: Status;
  priority: Priority;
  title: string;
  stepsToReproduce: string | null;
  actualResult: string | null;
  expectedResult: string | null;
  useCase: string | null;
  source: Source;
  /** The tracked error (`err_…`) or alert rule (`ar_…`) a platform item is about; null otherwise. */
  sourceRef: string | null;
  reportedBy: string;
  /** How often it was filed: 1, plus one per regression of its error or new firing of its alert. */
  timesFiled: number;
  createdAt: string;
  updatedAt: string;
  statusChangedAt: string;
  statusChangedBy: string;
};

export type CreateInput = {
  type: string;
  title: string;
  stepsToReproduce?: string | null;
  actualResult?: string | null;
  expectedResult?: string | null;
  priority?: string;
};

export type ItemPatch = {
  title?: string;
  priority?: string;
  status?: string;
  stepsToReproduce?: string | null;
  actualResult?: string | null;
  expectedResult?: string | null;
  useCase?: string | null;
};

export type IntakeInput = { title: string; useCase?: string | null; stepsToReproduce?: string | null; actualResult?: string | null; expectedResult?: string | null };

/** What the intake answers: a new item, or the open item the title repeats. */
export type IntakeResult = { created: true; id: string; number: number } | { created: false; number: number };

/** What a new item is made of; its id, number and times are the insert's. */
type NewItem = Pick<QueueItem, "type" | "status" | "priority" | "title" | TextField | "source" | "sourceRef"> & { actor: AuditActor };

type IntakeJob = Pick<NewItem, "title" | TextField | "actor"> & { projectId: string; type: FiledType };

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

/** A tracked error that became new or regressed, as the errors module tells it (inside its transaction). */
export type ErrorFiling = { errorId: string; kind: "new" | "regressed"; type: string; message: string; culprit: string | null; fingerprint: string };

/** An alert rule that started firing, as the alerts evaluator tells it (inside its transaction). */
export type AlertFiling = { ruleId: string; ruleName: string; metricId: string; value: number; comparator: string; threshold: number; windowHours: number; at: string };

type TextField = "stepsToReproduce" | "actualResult" | "expectedResult" | "useCase";
const TEXT_FIELDS: readonly TextField[] = ["stepsToReproduce", "actualResult", "expectedResult", "useCase"];
const COLUMN_OF: Record<TextField, "steps_to_reproduce" | "actual_result" | "expected_result" | "use_case"> = {
  stepsToReproduce: "steps_to_reproduce",
  actualResult: "actual_result",
  expectedResult: "expected_result",
  useCase: "use_case",
};

/** The one lock of a project's queue: numbering, the intake's dedupe, every item write. */
export function lockScope(projectId: string): string {
  return `ops:${projectId}`;
}

/** The title as the intake's dedupe compares it: case-folded, whitespace runs as one space, trimmed. */
export function titleKey(title: string): string {
  return title.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim();
}

// Controls other than tab, newline and carriage return (text fields are multi-line; titles are one line).
const TEXT_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const TITLE_CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function checkTitle(title: unknown, field = "title"): string {
  if (typeof title !== "string") throw validation(`${field} must be a string`, `${field}: must be a string of 1 to ${TITLE_MAX} characters`);
  const trimmed = title.trim().toWellFormed();
  if (trimmed.length < 1 || trimmed.length > TITLE_MAX) {
    throw validation(`${field} must be 1 to ${TITLE_MAX} characters`, `${field}: ${trimmed.length} characters after trimming; allowed 1 to ${TITLE_MAX}`);
  }
  if (TITLE_CONTROLS.test(trimmed)) throw validation(`${field} must not contain control characters or line breaks`, `${field}: one line, no control characters (tabs count as spaces)`);
  return trimmed;
}

/** A multi-line text field: null/absent/blank is null; else at most TEXT_MAX characters without controls other than tab and line breaks. */
function checkText(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw validation(`${field} must be a string or null`, `${field}: must be a string of at most ${TEXT_MAX} characters, or null`);
  if (value.length > TEXT_MAX) throw validation(`${field} must be at most ${TEXT_MAX} characters`, `${field}: ${value.length} characters; allowed at most ${TEXT_MAX}`);
  if (TEXT_CONTROLS.test(value)) throw validation(`${field} must not contain control characters`, `${field}: only tab and line breaks are allowed among control characters`);
  const text = value.toWellFormed();
  return text.trim() === "" ? null : text;
}

function checkPriority(priority: unknown): Priority {
  if (!(PRIORITIES as readonly unknown[]).includes(priority)) throw validation("Unknown priority", `priority: one of ${PRIORITIES.join(", ")}`);
  return priority as Priority;
}

function checkFiledType(type: unknown): FiledType {
  if (type === "error" || type === "alert") {
    throw validation(`${type} items are filed by the platform`, `type: ${type} items are filed by svc itself for tracked errors and firing alerts; file one of ${FILED_TYPES.join(", ")}`);
  }
  if (!(FILED_TYPES as readonly unknown[]).includes(type)) throw validation("Unknown type", `type: one of ${FILED_TYPES.join(", ")}`);
  return type as FiledType;
}

function checkStatus(status: unknown): Status {
  if (!(STATUSES as readonly unknown[]).includes(status)) throw validation("Unknown status", `status: one of ${STATUSES.join(", ")}`);
  return status as Status;
}

/** `fb_…` is an id; `12` or `#12` a number. */
export function parseRef(ref: string): { id: string } | { number: number } {
  const m = /^#?(\d{1,9})$/.exec(ref);
  return m ? { number: Number(m[1]) } : { id: ref };
}

export function toItem(r: OpsItemRow): QueueItem {
  return {
    id: r.id,
    number: Number(r.number),
    type: r.type as ItemType,
    status: r.status as Status,
    priority: r.priority as Priority,
    title: r.title,
    stepsToReproduce: r.steps_to_reproduce,
    actualResult: r.actual_result,
    expectedResult: r.expected_result,
    useCase: r.use_case,
    source: r.source as Source,
    sourceRef: r.source_ref,
    reportedBy: r.reported_by,
    timesFiled: Number(r.times_filed),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    statusChangedAt: r.status_changed_at,
    statusChangedBy: r.status_changed_by,
  };
}

/**
 * The payload of `bug.created`, `feature_request.created` and
 * `ticket.approved` (OpsEventPayloadSchema in contract.ts documents it):
 * the item as the API shows it, plus who approved it for `ticket.approved`,
 * and `source`: `public` for an item filed through the public intake (its
 * text is an anonymous person's: connectors hand it to agents as untrusted
 * data), else the item's own source (admin, platform).
 */
export function eventPayload(item: QueueItem, approvedBy?: string): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    source: item.source === "intake" ? "public" : item.source,
    item: {
      id: item.id,
      number: item.number,
      type: item.type,
      status: item.status,
      priority: item.priority,
      title: item.title,
      stepsToReproduce: item.stepsToReproduce,
      actualResult: item.actualResult,
      expectedResult: item.expectedResult,
      useCase: item.useCase,
      source: item.source,
      reportedBy: item.reportedBy,
      createdAt: item.createdAt,
    },
  };
  if (approvedBy !== undefined) payload.approvedBy = approvedBy;
  return payload;
}

const COMPARATOR_TEXT: Record<string, string> = { gt: ">", gte: "≥", lt: "<", lte: "≤" };
const NEGATED: Record<string, string> = { gt: "≤", gte: "<", lt: "≥", lte: ">" };

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * Queue items: bug reports and feature requests filed by people (admin API,
 * dashboard, CLI) or the public intake, and the error and alert items svc
 * files itself. Every write is one transaction under the project's ops lock
 * with its audit row, and, for a new bug or feature request and for an
 * approval, its outbox event (bug.created, feature_request.created,
 * ticket.approved) for the connectors.
 */
export class OpsService {
  constructor(private readonly ctx: ServiceContext) {}

  async list(projectId: string, filter: { q?: string; type?: string; status?: string } = {}): Promise<QueueItem[]> {
    if (filter.type !== undefined && !(ITEM_TYPES as readonly string[]).includes(filter.type)) throw validation("Unknown type", `type: one of ${ITEM_TYPES.join(", ")}`);
    if (filter.status !== undefined) checkStatus(filter.status);
    const rows = (await itemsOfProject(this.ctx.store, projectId, filter)).map(toItem);
    return filterByQuery(rows, filter.q, (i) => [i.title, i.stepsToReproduce, i.actualResult, i.expectedResult, i.useCase]);
  }

  /** By id (`fb_…`) or number (`12`, `#12`). */
  async get(projectId: string, ref: string): Promise<QueueItem> {
    return toItem(await this.find(this.ctx.store, projectId, ref));
  }

  /** POST /api/admin/ops: a bug or feature request filed by a person; open at once (no approval: the filer may write). */
  async create(projectId: string, input: CreateInput, actor: AuditActor): Promise<{ id: string; number: number }> {
    const type = checkFiledType(input.type);
    const title = checkTitle(input.title);
    const texts = {
      stepsToReproduce: checkText("stepsToReproduce", input.stepsToReproduce),
      actualResult: checkText("actualResult", input.actualResult),
      expectedResult: checkText("expectedResult", input.expectedResult),
      useCase: null,
    };
    const priority = input.priority === undefined ? DEFAULT_PRIORITY : checkPriority(input.priority);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const item = await this.insert(tx, projectId, { type, status: "open", priority, title, ...texts, source: "admin", sourceRef: null, actor });
      return { id: item.id, number: item.number };
    });
  }

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
      const item = await this.insert(tx, job.projectId, {
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

  /**
   * A partial update: title, priority, the text fields, and status along
   * TRANSITIONS (VALIDATION naming status otherwise). pending_approval →
   * open is the approval (audited as ops.approve, emits ticket.approved);
   * → rejected from pending_approval is ops.reject. Nothing different from
   * what is stored: nothing is written.
   */
  async update(projectId: string, ref: string, patch: ItemPatch, actor: AuditActor): Promise<QueueItem> {
    const title = patch.title === undefined ? undefined : checkTitle(patch.title);
    const priority = patch.priority === undefined ? undefined : checkPriority(patch.priority);
    const status = patch.status === undefined ? undefined : checkStatus(patch.status);
    const texts: Partial<Record<TextField, string | null>> = {};
    for (const field of TEXT_FIELDS) if (patch[field] !== undefined) texts[field] = checkText(field, patch[field]);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, ref);
      const next: OpsItemRow = { ...row };
      if (title !== undefined) {
        next.title = title;
        next.title_key = titleKey(title);
      }
      if (priority !== undefined) next.priority = priority;
      for (const field of TEXT_FIELDS) if (field in texts) next[COLUMN_OF[field]] = texts[field]!;
      const from = row.status as Status;
      if (status !== undefined && status !== from) {
        if (!TRANSITIONS[from].includes(status)) throw refusedTransition(from, status);
        next.status = status;
      }
      return this.apply(tx, projectId, row, next, actor);
    });
  }

  /** pending_approval → open; emits ticket.approved. Anything but a pending item is VALIDATION naming status. */
  async approve(projectId: string, ref: string, actor: AuditActor): Promise<QueueItem> {
    return this.decide(projectId, ref, "open", actor);
  }

  /** pending_approval (or open) → rejected. */
  async reject(projectId: string, ref: string, actor: AuditActor): Promise<QueueItem> {
    return this.decide(projectId, ref, "rejected", actor);
  }

  private decide(projectId: string, ref: string, to: "open" | "rejected", actor: AuditActor): Promise<QueueItem> {
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, ref);
      const from = row.status as Status;
      if (to === "open" && from !== "pending_approval") {
        throw validation(`Item #${row.number} is ${from}, not pending approval`, `status: only pending_approval items are approved (this one is ${from})`);
      }
      if (!TRANSITIONS[from].includes(to)) throw refusedTransition(from, to);
      return this.apply(tx, projectId, row, { ...row, status: to }, actor);
    });
  }

  /**
   * The errors module, inside the transaction that found tracked errors new
   * or regressed: one item per error. No item yet: a new `error` item, open,
   * priority high. One still open: counted (timesFiled + 1, `ops.recur`).
   * Done: reopened (→ open, `ops.reopen`). Rejected: counted, left rejected
   * (someone decided not to act on it). Emits nothing: the error.new and
   * error.regressed events are the errors module's.
   *
   * At most `mayOpen` items are filed or reopened (the errors module's
   * per-minute allowance); filings past it change nothing and are answered
   * in `skipped`, in order. Counting an item still open is always done.
   */
  async fileForErrors(tx: Tx, projectId: string, filings: ErrorFiling[], mayOpen = Number.POSITIVE_INFINITY): Promise<{ opened: number; skipped: ErrorFiling[] }> {
    const skipped: ErrorFiling[] = [];
    let opened = 0;
    if (filings.length === 0) return { opened, skipped };
    await tx.lock(lockScope(projectId));
    for (const f of filings) {
      const title = clip(`${f.type}: ${f.message.replace(/\s+/gu, " ").trim()}`, TITLE_MAX);
      const actual = [f.message, f.culprit ? `at ${f.culprit}` : null, `fingerprint ${f.fingerprint}`].filter(Boolean).join("\n");
      const outcome = await this.platformFiling(
        tx,
        projectId,
        f.errorId,
        f.kind,
        { type: "error", title, actualResult: clip(actual, TEXT_MAX), expectedResult: "No such error" },
        opened < mayOpen,
      );
      if (outcome === "opened") opened++;
      else if (outcome === "skipped") skipped.push(f);
    }
    return { opened, skipped };
  }

  /** The alerts evaluator, inside the transaction of an ok → firing transition: as fileForErrors, one item per rule. */
  async fileForAlert(tx: Tx, projectId: string, f: AlertFiling): Promise<void> {
    await tx.lock(lockScope(projectId));
    const op = COMPARATOR_TEXT[f.comparator] ?? f.comparator;
    await this.platformFiling(tx, projectId, f.ruleId, "firing", {
      type: "alert",
      title: clip(`Alert ${f.ruleName} firing`, TITLE_MAX),
      actualResult: `Metric ${f.metricId} was ${f.value} over the ${f.windowHours} h before ${f.at} (rule: ${op} ${f.threshold})`,
      expectedResult: `Metric ${f.metricId} ${NEGATED[f.comparator] ?? "not"} ${f.threshold}`,
    });
  }

  private async platformFiling(
    tx: Tx,
    projectId: string,
    sourceRef: string,
    kind: string,
    what: { type: "error" | "alert"; title: string; actualResult: string; expectedResult: string },
    mayOpen = true,
  ): Promise<"opened" | "counted" | "skipped"> {
    const latest = await latestItemFor(tx, projectId, sourceRef);
    // Filing or reopening makes an open item: past the caller's allowance, nothing is written.
    if (!mayOpen && (!latest || latest.status === "done")) return "skipped";
    if (!latest) {
      await this.insert(tx, projectId, {
        type: what.type,
        status: "open",
        priority: "high",
        title: what.title,
        stepsToReproduce: null,
        actualResult: what.actualResult,
        expectedResult: what.expectedResult,
        useCase: null,
        source: "platform",
        sourceRef,
        actor: SYSTEM_ACTOR,
      });
      return "opened";
    }
    const now = nowIso();
    const reopen = latest.status === "done";
    const next: OpsItemRow = {
      ...latest,
      times_filed: Number(latest.times_filed) + 1,
      actual_result: what.actualResult,
      updated_at: now,
      ...(reopen ? { status: "open", status_changed_at: now, status_changed_by: SYSTEM_ACTOR.email } : {}),
    };
    await updateItem(tx, next);
    await recordAudit(tx, {
      projectId,
      action: reopen ? ACTIONS.reopen : ACTIONS.recur,
      subjectId: latest.id,
      subjectName: `#${latest.number} ${latest.title}`,
      actor: SYSTEM_ACTOR,
      detail: { kind, sourceRef, status: next.status, timesFiled: next.times_filed },
    });
    return reopen ? "opened" : "counted";
  }

  private async insert(tx: Tx, projectId: string, f: NewItem): Promise<QueueItem> {
    const now = nowIso();
    const row: OpsItemRow = {
      id: newId("fb"),
      project_id: projectId,
      number: await nextNumber(tx, projectId),
      type: f.type,
      status: f.status,
      priority: f.priority,
      title: f.title,
      title_key: titleKey(f.title),
      steps_to_reproduce: f.stepsToReproduce,
      actual_result: f.actualResult,
      expected_result: f.expectedResult,
      use_case: f.useCase,
      source: f.source,
      source_ref: f.sourceRef,
      reported_by: f.actor.email,
      times_filed: 1,
      created_at: now,
      updated_at: now,
      status_changed_at: now,
      status_changed_by: f.actor.email,
    };
    await insertItem(tx, row);
    const item = toItem(row);
    await recordAudit(tx, {
      projectId,
      action: ACTIONS.create,
      subjectId: item.id,
      subjectName: `#${item.number} ${item.title}`,
      actor: f.actor,
      detail: { number: item.number, type: item.type, status: item.status, priority: item.priority, source: item.source, sourceRef: item.sourceRef },
    });
    // An item waiting for approval (the public intake's) fires no connector: anonymous text reaches agents and
    // chats only once a person has approved it (apply emits its .created then).
    if ((item.type === "bug" || item.type === "feature_request") && item.status !== "pending_approval") await emitCreated(tx, projectId, item);
    return item;
  }

  /** Writes a changed row with its audit row (and ticket.approved for an approval); an unchanged one writes nothing. */
  private async apply(tx: Tx, projectId: string, row: OpsItemRow, next: OpsItemRow, actor: AuditActor): Promise<QueueItem> {
    const before = toItem(row);
    const changed = toItem(next);
    const fields = (["title", "priority", "status", ...TEXT_FIELDS] as const).filter((f) => before[f] !== changed[f]);
    if (fields.length === 0) return before;
    const now = nowIso();
    next.updated_at = now;
    if (next.status !== row.status) {
      next.status_changed_at = now;
      next.status_changed_by = actor.email;
    }
    await updateItem(tx, next);
    const after = toItem(next);
    const approved = row.status === "pending_approval" && next.status === "open";
    const rejected = row.status !== "rejected" && next.status === "rejected";
    const pick = (i: QueueItem) => Object.fromEntries(fields.map((f) => [f, i[f]]));
    await recordAudit(tx, {
      projectId,
      action: approved ? ACTIONS.approve : rejected ? ACTIONS.reject : ACTIONS.update,
      subjectId: row.id,
      subjectName: `#${after.number} ${after.title}`,
      actor,
      detail: { number: after.number, fields, before: pick(before), after: pick(after) },
    });
    if (approved) {
      if (after.type === "bug" || after.type === "feature_request") await emitCreated(tx, projectId, after);
      await emitEvent(tx, { projectId, type: "ticket.approved", payload: eventPayload(after, actor.email) });
    }
    return after;
  }

  private async find(q: Queryable, projectId: string, ref: string): Promise<OpsItemRow> {
    const parsed = parseRef(ref);
    const row = "number" in parsed ? await itemByNumber(q, projectId, parsed.number) : await itemById(q, projectId, parsed.id);
    if (!row) throw notFound(`Queue item ${ref} not found`, "id: an item id (fb_…) or its number");
    return row;
  }
}

/** bug.created or feature_request.created: at filing, or for a public item at its approval (with `source: "public"`). */
function emitCreated(tx: Tx, projectId: string, item: QueueItem): Promise<unknown> {
  return emitEvent(tx, { projectId, type: item.type === "bug" ? "bug.created" : "feature_request.created", payload: eventPayload(item) });
}

function closedToPublic() {
  return forbidden("This project does not take public tickets", 'publicTicketCreation: an owner turns it on with PATCH /api/admin/projects/{id} {"publicTicketCreation": true}');
}

function refusedTransition(from: Status, to: Status) {
  const allowed = TRANSITIONS[from];
  return validation(
    `An item cannot go from ${from} to ${to}`,
    `status: from ${from} ${allowed.length > 0 ? `an item goes to ${allowed.join(" or ")}` : "an item goes nowhere (it is final)"}`,
  );
}
