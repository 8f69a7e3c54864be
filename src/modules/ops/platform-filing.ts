import { SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { nowIso } from "../../lib/ids";
import type { Tx } from "../../lib/store";
import { insertQueueItem } from "./items";
import { type OpsItemRow, latestItemFor, updateItem } from "./store";
import { ACTIONS, type AlertFiling, type ErrorFiling, TEXT_MAX, TITLE_MAX, lockScope } from "./types";

// The items svc files itself, in the caller's transaction: one per tracked error (errors module) and one per
// alert rule (alerts evaluator), counted or reopened when filed again.

const COMPARATOR_TEXT: Record<string, string> = { gt: ">", gte: "≥", lt: "<", lte: "≤" };
const NEGATED: Record<string, string> = { gt: "≤", gte: "<", lt: "≥", lte: ">" };

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

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
export async function fileForErrors(tx: Tx, projectId: string, filings: ErrorFiling[], mayOpen = Number.POSITIVE_INFINITY): Promise<{ opened: number; skipped: ErrorFiling[] }> {
  const skipped: ErrorFiling[] = [];
  let opened = 0;
  if (filings.length === 0) return { opened, skipped };
  await tx.lock(lockScope(projectId));
  for (const f of filings) {
    const title = clip(`${f.type}: ${f.message.replace(/\s+/gu, " ").trim()}`, TITLE_MAX);
    const actual = [f.message, f.culprit ? `at ${f.culprit}` : null, `fingerprint ${f.fingerprint}`].filter(Boolean).join("\n");
    const outcome = await platformFiling(
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
export async function fileForAlert(tx: Tx, projectId: string, f: AlertFiling): Promise<void> {
  await tx.lock(lockScope(projectId));
  const op = COMPARATOR_TEXT[f.comparator] ?? f.comparator;
  await platformFiling(tx, projectId, f.ruleId, "firing", {
    type: "alert",
    title: clip(`Alert ${f.ruleName} firing`, TITLE_MAX),
    actualResult: `Metric ${f.metricId} was ${f.value} over the ${f.windowHours} h before ${f.at} (rule: ${op} ${f.threshold})`,
    expectedResult: `Metric ${f.metricId} ${NEGATED[f.comparator] ?? "not"} ${f.threshold}`,
  });
}

async function platformFiling(
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
    await insertQueueItem(tx, projectId, {
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
