import type { AuditActor } from "../../lib/audit";
import { validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import type { ServiceContext } from "../../lib/module";
import type { Tx } from "../../lib/store";
import { IntakeFlow } from "./intake-flow";
import { applyChange, findItem, insertQueueItem, refusedTransition } from "./items";
import { fileForAlert, fileForErrors } from "./platform-filing";
import { type OpsItemRow, itemsOfProject } from "./store";
import {
  type AlertFiling,
  COLUMN_OF,
  type CreateInput,
  DEFAULT_PRIORITY,
  type ErrorFiling,
  type FiledType,
  ITEM_TYPES,
  type IntakeInput,
  type IntakeResult,
  type ItemPatch,
  type QueueItem,
  type Status,
  TEXT_FIELDS,
  TRANSITIONS,
  type TextField,
  checkFiledType,
  checkPriority,
  checkStatus,
  checkText,
  checkTitle,
  lockScope,
  titleKey,
  toItem,
} from "./types";

// The module's types and limits live in types.ts; said again here for the callers that import them from the service.
export * from "./types";
export { Batcher } from "./intake-flow";

/**
 * Queue items: bug reports and feature requests filed by people (admin API,
 * dashboard, CLI) or the public intake, and the error and alert items svc
 * files itself. Every write is one transaction under the project's ops lock
 * with its audit row, and, for a new bug or feature request and for an
 * approval, its outbox event (bug.created, feature_request.created,
 * ticket.approved) for the connectors.
 */
export class OpsService {
  private readonly intakeFlow: IntakeFlow;

  constructor(private readonly ctx: ServiceContext) {
    this.intakeFlow = new IntakeFlow(ctx);
  }

  async list(projectId: string, filter: { q?: string; type?: string; status?: string } = {}): Promise<QueueItem[]> {
    if (filter.type !== undefined && !(ITEM_TYPES as readonly string[]).includes(filter.type)) throw validation("Unknown type", `type: one of ${ITEM_TYPES.join(", ")}`);
    if (filter.status !== undefined) checkStatus(filter.status);
    const rows = (await itemsOfProject(this.ctx.store, projectId, filter)).map(toItem);
    return filterByQuery(rows, filter.q, (i) => [i.title, i.stepsToReproduce, i.actualResult, i.expectedResult, i.useCase]);
  }

  /** By id (`fb_…`) or number (`12`, `#12`). */
  async get(projectId: string, ref: string): Promise<QueueItem> {
    return toItem(await findItem(this.ctx.store, projectId, ref));
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
      const item = await insertQueueItem(tx, projectId, { type, status: "open", priority, title, ...texts, source: "admin", sourceRef: null, actor });
      return { id: item.id, number: item.number };
    });
  }

  /** The public intake (POST /ops/bug, /ops/feature-request): a new item pending approval, or the number of the open intake item the title repeats (intake-flow.ts). */
  intake(projectId: string, type: FiledType, input: IntakeInput, actor: AuditActor): Promise<IntakeResult> {
    return this.intakeFlow.intake(projectId, type, input, actor);
  }

  /** The project's intake settings, for the routes: FORBIDDEN unless it takes public tickets; its pages' origin (null: no domain set). */
  intakeProject(projectId: string): Promise<{ origin: string | null }> {
    return this.intakeFlow.intakeProject(projectId);
  }

  /** Whether a browser origin is the domain of some project that takes public tickets (CORS preflights carry no key). */
  isIntakeOrigin(origin: string): Promise<boolean> {
    return this.intakeFlow.isIntakeOrigin(origin);
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
      const row = await findItem(tx, projectId, ref);
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
      return applyChange(tx, projectId, row, next, actor);
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
      const row = await findItem(tx, projectId, ref);
      const from = row.status as Status;
      if (to === "open" && from !== "pending_approval") {
        throw validation(`Item #${row.number} is ${from}, not pending approval`, `status: only pending_approval items are approved (this one is ${from})`);
      }
      if (!TRANSITIONS[from].includes(to)) throw refusedTransition(from, to);
      return applyChange(tx, projectId, row, { ...row, status: to }, actor);
    });
  }

  /** The errors module, inside its transaction: one item per new or regressed error, at most `mayOpen` filed or reopened (platform-filing.ts). */
  fileForErrors(tx: Tx, projectId: string, filings: ErrorFiling[], mayOpen = Number.POSITIVE_INFINITY): Promise<{ opened: number; skipped: ErrorFiling[] }> {
    return fileForErrors(tx, projectId, filings, mayOpen);
  }

  /** The alerts evaluator, inside the transaction of an ok → firing transition: one item per rule (platform-filing.ts). */
  fileForAlert(tx: Tx, projectId: string, f: AlertFiling): Promise<void> {
    return fileForAlert(tx, projectId, f);
  }
}
