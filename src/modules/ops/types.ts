import type { AuditActor } from "../../lib/audit";
import { validation } from "../../lib/errors";
import type { OpsItemRow } from "./store";

// The ops module's own types, limits, checks and row mapping: shared by the service and its flows
// (items.ts, intake-flow.ts, platform-filing.ts), which import them from here rather than from service.ts.

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
export type NewItem = Pick<QueueItem, "type" | "status" | "priority" | "title" | TextField | "source" | "sourceRef"> & { actor: AuditActor };

export type IntakeJob = Pick<NewItem, "title" | TextField | "actor"> & { projectId: string; type: FiledType };

/** A tracked error that became new or regressed, as the errors module tells it (inside its transaction). */
export type ErrorFiling = { errorId: string; kind: "new" | "regressed"; type: string; message: string; culprit: string | null; fingerprint: string };

/** An alert rule that started firing, as the alerts evaluator tells it (inside its transaction). */
export type AlertFiling = { ruleId: string; ruleName: string; metricId: string; value: number; comparator: string; threshold: number; windowHours: number; at: string };

export type TextField = "stepsToReproduce" | "actualResult" | "expectedResult" | "useCase";
export const TEXT_FIELDS: readonly TextField[] = ["stepsToReproduce", "actualResult", "expectedResult", "useCase"];
export const COLUMN_OF: Record<TextField, "steps_to_reproduce" | "actual_result" | "expected_result" | "use_case"> = {
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
export const TEXT_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
export const TITLE_CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f]/;

export function checkTitle(title: unknown, field = "title"): string {
  if (typeof title !== "string") throw validation(`${field} must be a string`, `${field}: must be a string of 1 to ${TITLE_MAX} characters`);
  const trimmed = title.trim().toWellFormed();
  if (trimmed.length < 1 || trimmed.length > TITLE_MAX) {
    throw validation(`${field} must be 1 to ${TITLE_MAX} characters`, `${field}: ${trimmed.length} characters after trimming; allowed 1 to ${TITLE_MAX}`);
  }
  if (TITLE_CONTROLS.test(trimmed)) throw validation(`${field} must not contain control characters or line breaks`, `${field}: one line, no control characters (tabs count as spaces)`);
  return trimmed;
}

/** A multi-line text field: null/absent/blank is null; else at most TEXT_MAX characters without controls other than tab and line breaks. */
export function checkText(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw validation(`${field} must be a string or null`, `${field}: must be a string of at most ${TEXT_MAX} characters, or null`);
  if (value.length > TEXT_MAX) throw validation(`${field} must be at most ${TEXT_MAX} characters`, `${field}: ${value.length} characters; allowed at most ${TEXT_MAX}`);
  if (TEXT_CONTROLS.test(value)) throw validation(`${field} must not contain control characters`, `${field}: only tab and line breaks are allowed among control characters`);
  const text = value.toWellFormed();
  return text.trim() === "" ? null : text;
}

export function checkPriority(priority: unknown): Priority {
  if (!(PRIORITIES as readonly unknown[]).includes(priority)) throw validation("Unknown priority", `priority: one of ${PRIORITIES.join(", ")}`);
  return priority as Priority;
}

export function checkFiledType(type: unknown): FiledType {
  if (type === "error" || type === "alert") {
    throw validation(`${type} items are filed by the platform`, `type: ${type} items are filed by svc itself for tracked errors and firing alerts; file one of ${FILED_TYPES.join(", ")}`);
  }
  if (!(FILED_TYPES as readonly unknown[]).includes(type)) throw validation("Unknown type", `type: one of ${FILED_TYPES.join(", ")}`);
  return type as FiledType;
}

export function checkStatus(status: unknown): Status {
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
