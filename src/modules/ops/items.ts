import { type AuditActor, recordAudit } from "../../lib/audit";
import { forbidden, notFound, validation } from "../../lib/errors";
import { newId, nowIso } from "../../lib/ids";
import { emitEvent } from "../../lib/outbox";
import type { Queryable, Tx } from "../../lib/store";
import { type OpsItemRow, insertItem, itemById, itemByNumber, nextNumber, updateItem } from "./store";
import { ACTIONS, type NewItem, type QueueItem, type Status, TEXT_FIELDS, TRANSITIONS, eventPayload, parseRef, titleKey, toItem } from "./types";

// Writing one queue item inside the caller's transaction, with its audit row and the connector events it emits
// (bug.created, feature_request.created, ticket.approved): shared by the service, the intake and the platform's filings.

export async function insertQueueItem(tx: Tx, projectId: string, f: NewItem): Promise<QueueItem> {
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
export async function applyChange(tx: Tx, projectId: string, row: OpsItemRow, next: OpsItemRow, actor: AuditActor): Promise<QueueItem> {
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

export async function findItem(q: Queryable, projectId: string, ref: string): Promise<OpsItemRow> {
  const parsed = parseRef(ref);
  const row = "number" in parsed ? await itemByNumber(q, projectId, parsed.number) : await itemById(q, projectId, parsed.id);
  if (!row) throw notFound(`Queue item ${ref} not found`, "id: an item id (fb_…) or its number");
  return row;
}

/** bug.created or feature_request.created: at filing, or for a public item at its approval (with `source: "public"`). */
function emitCreated(tx: Tx, projectId: string, item: QueueItem): Promise<unknown> {
  return emitEvent(tx, { projectId, type: item.type === "bug" ? "bug.created" : "feature_request.created", payload: eventPayload(item) });
}

export function closedToPublic() {
  return forbidden("This project does not take public tickets", 'publicTicketCreation: an owner turns it on with PATCH /api/admin/projects/{id} {"publicTicketCreation": true}');
}

export function refusedTransition(from: Status, to: Status) {
  const allowed = TRANSITIONS[from];
  return validation(
    `An item cannot go from ${from} to ${to}`,
    `status: from ${from} ${allowed.length > 0 ? `an item goes to ${allowed.join(" or ")}` : "an item goes nowhere (it is final)"}`,
  );
}
