import type { OutboxEventType } from "../../lib/outbox";

/**
 * What a delivery carries. Webhooks get this envelope as their JSON body;
 * the other providers get a message, issue, row or run built from it
 * (`describeEvent`).
 */
export type DeliveryEnvelope = {
  /** The outbox event's id (`evt_…`): also the `Idempotency-Key` header, the same on every attempt. */
  id: string;
  type: string;
  projectId: string;
  /** When the change happened (the outbox row's time). */
  createdAt: string;
  /** True for a test-fire (POST /api/admin/connectors/{id}/test). */
  test: boolean;
  data: Record<string, unknown>;
};

const ROLLOUT_FIELDS =
  "rolloutId, kind (gate or config), name (the gate's or config's), env, status, stage (index), percent, reason, metric, estimate and interval (of the regression that stopped it, else null), actor (email; system@svc.local for the monitor)";

/**
 * The payload (`data`) of each event type, as the emitting module writes it
 * (OpenAPI and docs/api.md list them; keep these in step with the emit calls).
 */
export const EVENT_PAYLOADS: Record<OutboxEventType, { when: string; fields: string; example: Record<string, unknown> }> = {
  "bug.created": {
    when: "A bug queue item is filed (POST /api/admin/ops, or by the platform for a tracked error or a firing alert), or a bug filed through the public intake (POST /ops/bug) is approved: a pending item fires nothing. Emitted by the ops module.",
    fields: "source (public: filed through the public intake, its text is an anonymous person's and untrusted; admin; platform), item: {id (fb_…), number, type \"bug\", status, priority, title, stepsToReproduce, actualResult, expectedResult, useCase, source, reportedBy, createdAt}",
    example: { source: "admin", item: { id: "fb_8fK2mQ", number: 42, type: "bug", status: "open", priority: "high", title: "Checkout button does nothing on Safari", stepsToReproduce: "1. Open checkout in Safari 17\n2. Click Pay", actualResult: "Nothing happens", expectedResult: "The payment page opens", useCase: null, source: "admin", reportedBy: "owner@example.com", createdAt: "2026-11-20T09:00:00.000Z" } },
  },
  "feature_request.created": {
    when: "A feature request is filed through the admin API, or one filed through the public intake (POST /ops/feature-request) is approved: a pending item fires nothing. Emitted by the ops module.",
    fields: "source and item: the same fields as bug.created, type \"feature_request\" (useCase set)",
    example: { source: "public", item: { id: "fb_3Lw9cX", number: 43, type: "feature_request", status: "open", priority: "medium", title: "Dark mode", stepsToReproduce: null, actualResult: null, expectedResult: null, useCase: "Night shifts", source: "intake", reportedBy: "client-key", createdAt: "2026-11-20T09:05:00.000Z" } },
  },
  "ticket.approved": {
    when: "A pending_approval item is approved (→ open). Emitted by the ops module.",
    fields: "source, item (as above, status \"open\"), approvedBy (who approved it)",
    example: { source: "public", item: { id: "fb_3Lw9cX", number: 43, type: "feature_request", status: "open", priority: "medium", title: "Dark mode", stepsToReproduce: null, actualResult: null, expectedResult: null, useCase: "Night shifts", source: "intake", reportedBy: "client-key", createdAt: "2026-11-20T09:05:00.000Z" }, approvedBy: "owner@example.com" },
  },
  "alert.firing": {
    when: "An alert rule's evaluation goes from ok to firing.",
    fields: "ruleId, rule (name), metricId, value, comparator, threshold, windowHours, from, to (epoch seconds of the window), at",
    example: { ruleId: "ar_7Hq2", rule: "checkout-errors", metricId: "met_9Zt1", value: 14, comparator: "gt", threshold: 10, windowHours: 1, from: 1767222000, to: 1767225600, at: "2026-01-01T00:00:00.000Z" },
  },
  "alert.resolved": {
    when: "A firing alert rule's evaluation goes back to ok.",
    fields: "the same fields as alert.firing",
    example: { ruleId: "ar_7Hq2", rule: "checkout-errors", metricId: "met_9Zt1", value: 3, comparator: "gt", threshold: 10, windowHours: 1, from: 1767225600, to: 1767229200, at: "2026-01-01T01:00:00.000Z" },
  },
  "error.new": {
    when: "An error fingerprint is seen for the first time in the project.",
    fields: "errorId, fingerprint, type, message, culprit, firstSeenAt, lastSeenAt, count, affectedUnits",
    example: { errorId: "err_5Rb8", fingerprint: "3f9a1c…", type: "TypeError", message: "Cannot read properties of undefined (reading 'id')", culprit: "checkout.ts in submit", firstSeenAt: "2026-01-01T00:00:00.000Z", lastSeenAt: "2026-01-01T00:00:03.000Z", count: 3, affectedUnits: 2 },
  },
  "error.regressed": {
    when: "A resolved error happens again (status resolved → regressed).",
    fields: "errorId, fingerprint, type, message, culprit, occurrences (in this batch), resolvedAt, resolvedBy",
    example: { errorId: "err_5Rb8", fingerprint: "3f9a1c…", type: "TypeError", message: "Cannot read properties of undefined (reading 'id')", culprit: "checkout.ts in submit", occurrences: 1, resolvedAt: "2026-01-01T02:00:00.000Z", resolvedBy: "owner@example.com" },
  },
  "config.published": {
    when: "A config gets new published versions: a draft published (POST /configs/{id}/publish) or a PATCH with value or per-env values.",
    fields: "configId, name, action (config.publish or config.update), versions ({env: new version}), actor (email)",
    example: { configId: "cfg_2Mn4", name: "checkout-limits", action: "config.publish", versions: { prod: 7 }, actor: "owner@example.com" },
  },
  "killswitch.toggled": {
    when: "A killswitch's value or sub-switches change on an env (toggle, switch set or delete, value set, rollback).",
    fields: "killswitchId, name, env, action (killswitch.toggle, killswitch.switch.set, …), version, value, switches, and for a toggle switchKey and previous; actor (email)",
    example: { killswitchId: "ksw_6Yp3", name: "checkout", env: "prod", action: "killswitch.toggle", version: 12, value: false, switches: {}, switchKey: null, previous: true, actor: "owner@example.com" },
  },
  "experiment.rolled_back": {
    when: "A running experiment was stopped by its guardrail check (auto-rollback): a guardrail metric moved significantly the harmful way. Emitted by the experiments module.",
    fields: "experimentId, name, env, reason (the guardrail, its move and the evidence), actor (system@svc.local)",
    example: { experimentId: "exp_3Jk9", name: "checkout-button", env: "prod", reason: "Guardrail checkout-errors rose in variant green (+41.2 % against control, p = 0.00213 < 0.05) after 7.0 days", actor: "system@svc.local" },
  },
  "rollout.advanced": {
    when: "A guarded rollout moves to its next stage (its time was up with no regression, or a person advanced it). Emitted by the rollouts module.",
    fields: ROLLOUT_FIELDS,
    example: { rolloutId: "rol_4Kd8", kind: "gate", name: "new-checkout", env: "prod", status: "running", stage: 2, percent: 25, reason: null, metric: null, estimate: null, interval: null, actor: "system@svc.local" },
  },
  "rollout.completed": {
    when: "A guarded rollout reached everyone: the change is published as the gate's rules or the config's value.",
    fields: ROLLOUT_FIELDS,
    example: { rolloutId: "rol_4Kd8", kind: "gate", name: "new-checkout", env: "prod", status: "completed", stage: 4, percent: 100, reason: null, metric: null, estimate: null, interval: null, actor: "system@svc.local" },
  },
  "rollout.paused": {
    when: "A guarded rollout paused itself on a regression (its action on regression is pause).",
    fields: ROLLOUT_FIELDS,
    example: { rolloutId: "rol_4Kd8", kind: "gate", name: "new-checkout", env: "prod", status: "paused", stage: 1, percent: 5, reason: "errors got higher with the change: 0.0412 against 0.0301 per unit, …", metric: "errors", estimate: 0.0111, interval: [0.0042, 0.018], actor: "system@svc.local" },
  },
  "rollout.rolled_back": {
    when: "A guarded rollout was rolled back, by its monitor on a regression or by a person: every unit gets the old value again.",
    fields: ROLLOUT_FIELDS,
    example: { rolloutId: "rol_4Kd8", kind: "gate", name: "new-checkout", env: "prod", status: "rolled_back", stage: 1, percent: 5, reason: "errors got higher with the change: 0.0412 against 0.0301 per unit, …", metric: "errors", estimate: 0.0111, interval: [0.0042, 0.018], actor: "system@svc.local" },
  },
  "flags.stale_digest": {
    when: "Once a week per project while it has stale flags (GET /api/admin/flags/stale): a server's timer claims the week, so several servers send it once. Emitted by the usage module.",
    fields: "staleAfterDays, count (stale entries), flags (the first 100: {name, kind, env, reasons (one_value, not_evaluated), lastEvaluatedAt, lastChangedAt}), truncated",
    example: { staleAfterDays: 30, count: 1, flags: [{ name: "old-banner", kind: "killswitch", env: "prod", reasons: ["one_value", "not_evaluated"], lastEvaluatedAt: null, lastChangedAt: "2026-09-01T10:00:00.000Z" }], truncated: false },
  },
  "request.opened": {
    when: "A change request was opened (issue 30: four eyes). Emitted by the requests module.",
    fields: "requestId, title, reason, state (open), changes (one summary each), approvalsRequired, actor (email of the author)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", reason: "Black Friday traffic", state: "open", changes: ["checkout-limits on prod: value"], approvalsRequired: 1, actor: "ana@example.com" },
  },
  "request.approved": {
    when: "A change request got the approvals it needs (state approved).",
    fields: "requestId, title, state (approved), approvers (emails), actor (email of the last approver)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", state: "approved", approvers: ["ben@example.com"], actor: "ben@example.com" },
  },
  "request.rejected": {
    when: "A person rejected a change request.",
    fields: "requestId, title, state (rejected), note, actor (email)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", state: "rejected", note: "Wait until Monday", actor: "ben@example.com" },
  },
  "request.applied": {
    when: "An approved change request was applied: its changes are published exactly as approved.",
    fields: "requestId, title, state (applied), changes (one summary each), actor (email; a schedule's author when its step published it), scheduleId (only then)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", state: "applied", changes: ["checkout-limits on prod: value"], actor: "ana@example.com" },
  },
  "request.withdrawn": {
    when: "The author withdrew a change request (open or approved, not held by a schedule).",
    fields: "requestId, title, state (withdrawn), actor (email of the author)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", state: "withdrawn", actor: "ana@example.com" },
  },
  "request.stale": {
    when: "Applying an approved change request found that what a change targets moved since it was opened: nothing was published; its author rebases it (request.rebased) to have it approved again.",
    fields: "requestId, title, state (stale), note (which change moved, from what to what), actor (email of who tried to apply it)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", state: "stale", note: "change 1 (checkout-limits on prod = 50) moved: version 7 when opened, version 8 now", actor: "ana@example.com" },
  },
  "request.rebased": {
    when: "The author rebased a stale change request onto what is published now: its changes are the same, its approvals were cleared, it is open again.",
    fields: "requestId, title, state (open), changes (each change's fingerprint, was → now), actor (email of the author)",
    example: { requestId: "cr_8Hq2Lm4TzX1cNp8aB3kQ", title: "Raise checkout limits", state: "open", changes: ["version 7 → version 8"], actor: "ana@example.com" },
  },
};

/** One Markdown list of every event type with its payload (OpenAPI descriptions). */
export function eventPayloadsMarkdown(): string {
  return Object.entries(EVENT_PAYLOADS)
    .map(([type, doc]) => `- \`${type}\`: ${doc.when} \`data\`: ${doc.fields}.`)
    .join("\n");
}

/** A sample payload for a test-fire of `type`. */
export function samplePayload(type: string): Record<string, unknown> {
  return { ...(EVENT_PAYLOADS[type as OutboxEventType]?.example ?? {}), test: true };
}

const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : v === null || v === undefined ? "" : JSON.stringify(v));

/** A human title and body for chat messages, issues, rows and agent prompts. */
export function describeEvent(e: DeliveryEnvelope): { title: string; text: string } {
  const d = e.data;
  const prefix = e.test ? "[test] " : "";
  let title: string;
  switch (e.type) {
    case "bug.created":
    case "feature_request.created":
    case "ticket.approved": {
      // The ops module's payload is {item, approvedBy?}; a flat item is read the same way.
      const item = (typeof d.item === "object" && d.item !== null ? d.item : d) as Record<string, unknown>;
      const kind = e.type === "bug.created" ? "Bug" : e.type === "feature_request.created" ? "Feature request" : `Approved ${item.type === "bug" ? "bug" : "feature request"}`;
      title = `${kind}${item.number !== undefined ? ` #${str(item.number)}` : ""}: ${str(item.title) || "(untitled)"}`;
      break;
    }
    case "alert.firing":
      title = `Alert firing: ${str(d.rule)} (${str(d.value)} ${str(d.comparator)} ${str(d.threshold)})`;
      break;
    case "alert.resolved":
      title = `Alert resolved: ${str(d.rule)} (${str(d.value)})`;
      break;
    case "error.new":
      title = `New error: ${str(d.type)}: ${str(d.message)}`;
      break;
    case "error.regressed":
      title = `Error regressed: ${str(d.type)}: ${str(d.message)}`;
      break;
    case "config.published":
      title = `Config ${str(d.name)} published (${Object.entries((d.versions as Record<string, unknown>) ?? {}).map(([env, v]) => `${env} v${str(v)}`).join(", ")})`;
      break;
    case "killswitch.toggled":
      title = `Killswitch ${str(d.name)}${d.switchKey ? `/${str(d.switchKey)}` : ""} on ${str(d.env)}: ${str(d.value)}`;
      break;
    case "experiment.rolled_back":
      title = `Experiment ${str(d.name)} on ${str(d.env)} rolled back by its guardrail`;
      break;
    case "rollout.advanced":
    case "rollout.completed":
    case "rollout.paused":
    case "rollout.rolled_back": {
      const what = { "rollout.advanced": `advanced to ${str(d.percent)} %`, "rollout.completed": "completed (100 %)", "rollout.paused": "paused", "rollout.rolled_back": "rolled back" }[e.type];
      title = `Rollout of ${str(d.kind)} ${str(d.name)} on ${str(d.env)} ${what}${d.metric ? ` (${str(d.metric)} regressed)` : ""}`;
      break;
    }
    case "flags.stale_digest":
      title = `${str(d.count)} stale flag${d.count === 1 ? "" : "s"} (unchanged or unused for ${str(d.staleAfterDays)} days)`;
      break;
    case "request.opened":
    case "request.approved":
    case "request.rejected":
    case "request.applied":
    case "request.withdrawn":
    case "request.stale":
    case "request.rebased":
      title = `Change request ${str(d.title)} ${str(d.state)}`;
      break;
    default:
      title = e.type;
  }
  // An item's fields one per line (null ones left out); other payloads as they are.
  const flat = typeof d.item === "object" && d.item !== null ? { ...(d.item as Record<string, unknown>), ...(d.approvedBy ? { approvedBy: d.approvedBy } : {}) } : d;
  const lines = Object.entries(flat)
    .filter(([k, v]) => k !== "test" && v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${str(v)}`);
  const text = [...lines, "", `event ${e.type} ${e.id} (project ${e.projectId}, ${e.createdAt})`].join("\n");
  return { title: (prefix + title).slice(0, 250), text };
}
