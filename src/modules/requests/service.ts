import { type PublishAttempt, runApproved, setPublishGuard } from "../../lib/approvals";
import { type AuditActor, recordAudit } from "../../lib/audit";
import type { Principal } from "../../lib/auth";
import type { ApprovalCheck, ApprovalRelease, ChangeRegistry, ParsedChange, StoredChange } from "../../lib/changes";
import { ENVS, type Env } from "../../lib/envs";
import { ApiError, forbidden, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import type { Queryable, Tx } from "../../lib/store";
import {
  type RequestRow,
  approvalsOf,
  approvedSingleChanges,
  changesOf,
  findRequest,
  clearApprovals,
  heldRequests,
  holdRequest,
  insertApproval,
  insertChange,
  insertRequest,
  policyOf,
  refingerprint,
  releaseRequest,
  reopenStale,
  requestsOf,
  savePolicy,
  setState,
} from "./store";
import { ACTIONS, APPROVALS_MAX, CHANGES_MAX, type ChangeRequest, DEFAULT_POLICY, type KindInfo, LIST_MAX, type OpenInput, PENDING, type Policy, type RequestChange, type RequestState, STATES } from "./types";

export { type ChangeRequest, type Policy, STATES };

/** Only a person approves: a signed-in session or a person's CLI token, never an admin key or a project API token. */
const PEOPLE: readonly Principal["kind"][] = ["session", "user_token"];

/** Key order does not change a change: compared as canonical JSON. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Change requests (four eyes): publishable changes (src/lib/changes.ts) proposed with a title and a reason, approved
 * by people other than the author who may make them, applied exactly as approved in one transaction with the audit
 * row, stale when what they change moved since. It also owns the project's approval policy and installs both hooks:
 * the direct-publish guard (src/lib/approvals.ts) and the schedules' approval check (ChangeRegistry.setApprovalCheck).
 */
export class RequestsService {
  constructor(private readonly ctx: ServiceContext) {
    setPublishGuard((tx, attempt) => this.guard(tx, attempt));
    ctx.changes?.setApprovalCheck((input) => this.scheduleCheck(input));
    ctx.changes?.setApprovalRelease((input) => this.release(input));
  }

  private get changes(): ChangeRegistry {
    if (!this.ctx.changes) throw new Error("no change registry: services built without createServices");
    return this.ctx.changes;
  }

  // ---- policy

  async policy(projectId: string, q: Queryable = this.ctx.store): Promise<Policy> {
    const text = await policyOf(q, projectId);
    return text === undefined ? structuredClone(DEFAULT_POLICY) : (JSON.parse(text) as Policy);
  }

  async setPolicy(projectId: string, input: { envs?: Record<string, { required: boolean; approvals?: number }>; killswitchBypass?: boolean }, actor: AuditActor): Promise<Policy> {
    const envs: Policy["envs"] = {};
    for (const [env, p] of Object.entries(input.envs ?? {})) {
      if (!(ENVS as readonly string[]).includes(env)) throw validation(`Unknown env ${env}`, `envs.${env}: expected one of ${ENVS.join(", ")}`);
      const approvals = p.approvals ?? 1;
      if (!Number.isInteger(approvals) || approvals < 1 || approvals > APPROVALS_MAX) throw validation("approvals is 1 to 5", `envs.${env}.approvals: an integer from 1 to ${APPROVALS_MAX}`);
      envs[env as Env] = { required: p.required, approvals };
    }
    return this.ctx.store.write(async (tx) => {
      await tx.lock(`approval-policy:${projectId}`);
      const before = await this.policy(projectId, tx);
      const policy: Policy = { envs: input.envs === undefined ? before.envs : envs, killswitchBypass: input.killswitchBypass ?? before.killswitchBypass };
      await savePolicy(tx, projectId, JSON.stringify(policy), actor.email, nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.policy, actor, detail: { before, after: policy } });
      return policy;
    });
  }

  /** The envs a change on `env` needs approval on (null: a segment, every env). */
  private requiredFor(policy: Policy, env: Env | null): { required: boolean; approvals: number } {
    const envs = env === null ? ENVS : [env];
    let approvals = 0;
    for (const e of envs) {
      const p = policy.envs[e];
      if (p?.required) approvals = Math.max(approvals, p.approvals);
    }
    return { required: approvals > 0, approvals: Math.max(1, approvals) };
  }

  // ---- the hooks

  /** The direct-publish guard: refuses a publish on an env that requires approval, unless a killswitch bypasses (audited). */
  private async guard(tx: Tx, attempt: PublishAttempt): Promise<void> {
    const policy = await this.policy(attempt.projectId, tx);
    if (!this.requiredFor(policy, attempt.env).required) return;
    const where = attempt.env === null ? "every env (a segment is used on all of them)" : attempt.env;
    // The bypass is for toggling in an emergency: a creation (attempt.kind) goes through a request.
    if (attempt.resource === "killswitches" && policy.killswitchBypass && attempt.kind === undefined) {
      if (attempt.bypassReason) {
        await recordAudit(tx, { projectId: attempt.projectId, action: ACTIONS.bypass, subjectId: attempt.subject, env: attempt.env ?? undefined, actor: attempt.actor, detail: { resource: attempt.resource, reason: attempt.bypassReason } });
        return;
      }
      throw new ApiError("APPROVAL_REQUIRED", `Publishing on ${where} requires an approved change request`, "reason: send a reason to toggle this killswitch as an emergency bypass (it is recorded), or open a change request (POST /api/admin/requests)");
    }
    const holding = attempt.kind === undefined ? "a change request" : `a change request holding a ${attempt.kind} change`;
    throw new ApiError("APPROVAL_REQUIRED", `Publishing on ${where} requires an approved change request`, `open ${holding} (POST /api/admin/requests, svc requests open) and apply it once approved`);
  }

  /**
   * Schedules: a change on an env requiring approval is scheduled only against an approved request holding exactly
   * that change, which the schedule then holds (`held_by`, taken in the schedule's transaction: of two schedules
   * racing for it, one gets it), one request per step; the step's publish uses it up (applied, audited, announced).
   */
  private async scheduleCheck(input: Parameters<ApprovalCheck>[0]): Promise<void> {
    if (input.phase === "apply") return this.useHeld(input);
    const q = input.tx ?? this.ctx.store;
    const policy = await this.policy(input.projectId, q);
    if (!this.requiredFor(policy, input.description.env).required) return;
    const wanted = canonical(input.change);
    const covering = (await approvedSingleChanges(q, input.projectId)).filter((r) => canonical(JSON.parse(r.change)) === wanted);
    if (input.phase === "hold") {
      if (!input.tx) throw new Error("an approval is held in the holder's transaction");
      for (const c of covering) {
        if (c.held_by !== null) continue;
        // The lock a decision or an apply of this request takes: it is held or decided, never both.
        await input.tx.lock(`change-request:${c.id}`);
        if ((await holdRequest(input.tx, c.id, input.holder.id, nowIso())) === 0) continue;
        await recordAudit(input.tx, { projectId: input.projectId, action: ACTIONS.hold, subjectId: c.id, actor: input.actor, detail: { holder: input.holder } });
        return;
      }
    } else if (covering.some((c) => c.held_by === null)) return;
    const held = covering.find((c) => c.held_by !== null);
    throw new ApiError(
      "APPROVAL_REQUIRED",
      `Scheduling ${input.description.summary} requires an approved change request holding this change`,
      held
        ? `${held.id} holds it but ${held.held_by === input.holder.id ? "an earlier step of this schedule takes" : `schedule ${held.held_by} holds`} that request (one approved request per scheduled step): open another${held.held_by === input.holder.id ? "" : ", or cancel that schedule"}`
        : "open a change request holding exactly this change (one per step of a ramp) and schedule it once approved",
    );
  }

  /** A step of the holder publishes its change: the request it held for it is applied, in the step's transaction. */
  private async useHeld(input: Parameters<ApprovalCheck>[0]): Promise<void> {
    const tx = input.tx;
    if (!tx) return;
    const wanted = canonical(input.change);
    const held = (await heldRequests(tx, input.projectId, input.holder.id)).find((r) => canonical(JSON.parse(r.change)) === wanted);
    // None: scheduled while no approval was required there.
    if (!held) return;
    await tx.lock(`change-request:${held.id}`);
    if ((await setState(tx, held.id, "approved", "applied", input.actor.email, null, nowIso())) === 0) return;
    const { projectId, actor, holder } = input;
    await recordAudit(tx, { projectId, action: ACTIONS.apply, subjectId: held.id, subjectName: held.title, actor, detail: { changes: [{ summary: held.summary }], holder } });
    await emitEvent(tx, { projectId, type: "request.applied", payload: { requestId: held.id, title: held.title, state: "applied", changes: [held.summary], actor: actor.email, [`${holder.type}Id`]: holder.id } });
  }

  /** A schedule cancelled or failed: the requests it held and did not apply are plain approved again. */
  private async release(input: Parameters<ApprovalRelease>[0]): Promise<void> {
    const { tx, projectId, holder, actor } = input;
    const ids = new Set((await heldRequests(tx, projectId, holder.id)).map((r) => r.id));
    for (const id of ids) {
      await tx.lock(`change-request:${id}`);
      if ((await releaseRequest(tx, id, holder.id, nowIso())) === 0) continue;
      await recordAudit(tx, { projectId, action: ACTIONS.release, subjectId: id, actor, detail: { holder } });
    }
  }

  /** A request a schedule holds is published by it: not applied, withdrawn or rejected by hand meanwhile. */
  private refuseIfHeld(row: RequestRow, verb: string): void {
    if (row.state !== "approved" || row.held_by === null) return;
    throw new ApiError("CONFLICT", `Change request ${row.id} is held by schedule ${row.held_by}`, `heldBy: ${row.held_by} publishes it at its time; cancel that schedule (DELETE /api/admin/schedules/${row.held_by}) to ${verb} it`);
  }

  // ---- requests

  async open(projectId: string, input: OpenInput, actor: AuditActor): Promise<ChangeRequest> {
    if (!Array.isArray(input.changes) || input.changes.length === 0) throw validation("A change request holds at least one change", "changes: at least one");
    if (input.changes.length > CHANGES_MAX) throw validation(`At most ${CHANGES_MAX} changes`, `changes: at most ${CHANGES_MAX}`);
    const parsed: { parsed: ParsedChange; field: string }[] = [];
    for (const [i, c] of input.changes.entries()) parsed.push({ parsed: await this.changes.parse(c, `changes[${i}]`), field: `changes[${i}]` });
    for (const p of parsed) {
      try {
        // Checked as the approved path would apply it: the module's own checks, not the guard this request answers.
        await runApproved(() => p.parsed.kind.check(projectId, p.parsed.body));
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `${p.field}: ${err.message}`, err.detail ? `${p.field}: ${err.detail}` : undefined, err.status);
        throw err;
      }
    }
    const id = newId("cr");
    const now = nowIso();
    return this.ctx.store.write(async (tx) => {
      const policy = await this.policy(projectId, tx);
      let approvals = 1;
      const rows: { p: ParsedChange; summary: string; fingerprint: string }[] = [];
      for (const { parsed: p } of parsed) {
        const d = p.kind.describe(projectId, p.body);
        approvals = Math.max(approvals, this.requiredFor(policy, d.env).approvals);
        rows.push({ p, summary: d.summary, fingerprint: await p.kind.fingerprint(tx, projectId, p.body) });
      }
      await insertRequest(tx, { id, project_id: projectId, title: input.title, reason: input.reason ?? null, state: "open", author: actor.email, approvals_required: approvals, decided_by: null, note: null, created_at: now, updated_at: now, held_by: null });
      for (const [i, r] of rows.entries()) await insertChange(tx, { request_id: id, position: i + 1, change: JSON.stringify(r.p.change), summary: r.summary.slice(0, 2000), fingerprint: r.fingerprint });
      const detail = { title: input.title, changes: rows.map((r) => ({ kind: r.p.change.kind, summary: r.summary, fingerprint: r.fingerprint })), approvalsRequired: approvals };
      await recordAudit(tx, { projectId, action: ACTIONS.open, subjectId: id, subjectName: input.title, actor, detail });
      await emitEvent(tx, { projectId, type: "request.opened", payload: { requestId: id, title: input.title, reason: input.reason ?? null, state: "open", changes: rows.map((r) => r.summary), approvalsRequired: approvals, actor: actor.email } });
      return (await this.load(tx, [(await findRequest(tx, projectId, id))!]))[0]!;
    });
  }

  async list(projectId: string, query: { q?: string; state?: string } = {}): Promise<ChangeRequest[]> {
    const state = query.state;
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw validation("Unknown state", `state: expected one of ${STATES.join(", ")}`);
    const rows = await requestsOf(this.ctx.store, projectId, state as RequestState | undefined, LIST_MAX);
    return this.load(this.ctx.store, filterByQuery(rows, query.q, (r) => [r.id, r.title, r.author, r.reason ?? ""]));
  }

  async get(projectId: string, idOrPrefix: string, q: Queryable = this.ctx.store): Promise<ChangeRequest> {
    const row = await findRequest(q, projectId, idOrPrefix);
    if (!row) throw notFound(`Change request ${idOrPrefix} not found`);
    return (await this.load(q, [row]))[0]!;
  }

  /**
   * One request with each change's diff: `proposed` (its payload as its kind shows it) and, while the request is
   * pending (open, approved, stale), `current`, what is published now, read at each call. An applied request's
   * "before" is its request.apply audit row; a kind without `current` shows none (`currentNote` says why).
   */
  async detail(projectId: string, idOrPrefix: string): Promise<ChangeRequest> {
    const request = await this.get(projectId, idOrPrefix);
    const q = this.ctx.store;
    for (const c of request.changes) {
      let parsed: ParsedChange;
      try {
        parsed = this.changes.of(c.change);
      } catch {
        c.currentNote = `not shown: ${c.kind} is not a known kind of change`;
        continue;
      }
      const { kind, body } = parsed;
      try {
        c.proposed = kind.proposed ? await kind.proposed(q, projectId, body) : body;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        c.proposed = body;
      }
      if (!kind.current) c.currentNote = "not shown for this kind";
      else if (!PENDING.includes(request.state)) c.currentNote = `not read: the request is ${request.state}; what an applied request replaced is in its request.apply audit row`;
      else {
        try {
          c.current = await kind.current(q, projectId, body);
        } catch (err) {
          // Its target was deleted since (NOT_FOUND): said, never a 500.
          if (!(err instanceof ApiError)) throw err;
          c.currentNote = `not read: ${err.message}`;
        }
      }
    }
    return request;
  }

  /** The kinds of change a request can hold: name, what it targets, a line about it, its body's fields, whether it shows a diff. */
  kinds(): KindInfo[] {
    return this.changes.all().map((k) => {
      const schema = k.schema as { properties?: Record<string, unknown>; required?: string[] };
      return { kind: k.kind, target: k.kind.split(".")[0]!, description: k.description ?? "", fields: Object.keys(schema.properties ?? {}), required: schema.required ?? [], diff: k.current !== undefined };
    });
  }

  /** A person other than the author, with the role to make the change; approved once enough people did. */
  async approve(projectId: string, idOrPrefix: string, principal: Principal): Promise<ChangeRequest> {
    this.mustBePerson(principal, "approve");
    return this.transition(projectId, idOrPrefix, ["open"], principal.actor, async (tx, row) => {
      if (row.author === principal.actor.email) throw forbidden("The author cannot approve their own change request", "approver: another person must approve it");
      const approvals = await approvalsOf(tx, [row.id]);
      if (approvals.some((a) => a.approver === principal.actor.email)) throw validation("You already approved this change request", `id: approved by ${principal.actor.email}`);
      const now = nowIso();
      await insertApproval(tx, row.id, principal.actor.email, now);
      const count = approvals.length + 1;
      const approved = count >= Number(row.approvals_required);
      if (approved) await setState(tx, row.id, "open", "approved", null, null, now);
      await recordAudit(tx, { projectId, action: ACTIONS.approve, subjectId: row.id, subjectName: row.title, actor: principal.actor, detail: { approvals: count, required: Number(row.approvals_required), state: approved ? "approved" : "open" } });
      if (approved) await emitEvent(tx, { projectId, type: "request.approved", payload: { requestId: row.id, title: row.title, state: "approved", approvers: [...approvals.map((a) => a.approver), principal.actor.email], actor: principal.actor.email } });
    });
  }

  async reject(projectId: string, idOrPrefix: string, principal: Principal, note?: string): Promise<ChangeRequest> {
    this.mustBePerson(principal, "reject");
    return this.transition(projectId, idOrPrefix, ["open", "approved"], principal.actor, async (tx, row) => {
      this.refuseIfHeld(row, "reject");
      await setState(tx, row.id, row.state, "rejected", principal.actor.email, note ?? null, nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.reject, subjectId: row.id, subjectName: row.title, actor: principal.actor, detail: { note: note ?? null } });
      await emitEvent(tx, { projectId, type: "request.rejected", payload: { requestId: row.id, title: row.title, state: "rejected", note: note ?? null, actor: principal.actor.email } });
    });
  }

  async withdraw(projectId: string, idOrPrefix: string, actor: AuditActor): Promise<ChangeRequest> {
    return this.transition(projectId, idOrPrefix, ["open", "approved"], actor, async (tx, row) => {
      if (row.author !== actor.email) throw forbidden("Only the author withdraws a change request", `author: ${row.author}`);
      this.refuseIfHeld(row, "withdraw");
      await setState(tx, row.id, row.state, "withdrawn", actor.email, null, nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.withdraw, subjectId: row.id, subjectName: row.title, actor });
      await emitEvent(tx, { projectId, type: "request.withdrawn", payload: { requestId: row.id, title: row.title, state: "withdrawn", actor: actor.email } });
    });
  }

  /**
   * Rebases a stale request (issue 30: "stale … it must be rebased"): its changes, unchanged, are checked again
   * against what is published now and take its fingerprints; the approvals given to the old base no longer count,
   * so it is open again and must be approved anew. Its author does it, as a withdrawal is theirs.
   */
  async rebase(projectId: string, idOrPrefix: string, actor: AuditActor): Promise<ChangeRequest> {
    const found = await findRequest(this.ctx.store, projectId, idOrPrefix);
    if (!found) throw notFound(`Change request ${idOrPrefix} not found`);
    const parsed = (await changesOf(this.ctx.store, [found.id])).map((c) => ({ row: c, p: this.changes.of(JSON.parse(c.change) as StoredChange), field: `changes[${Number(c.position) - 1}]` }));
    // Checked as on opening (outside the transaction: a check may dry-run a publish in its own).
    for (const { p, field } of parsed) {
      try {
        await runApproved(() => p.kind.check(projectId, p.body));
      } catch (err) {
        if (err instanceof ApiError) throw new ApiError(err.code, `${field}: ${err.message}`, err.detail ? `${field}: ${err.detail}` : undefined, err.status);
        throw err;
      }
    }
    return this.transition(projectId, found.id, ["stale"], actor, async (tx, row) => {
      if (row.author !== actor.email) throw forbidden("Only the author rebases a change request", `author: ${row.author}`);
      const moved: { position: number; was: string; now: string }[] = [];
      for (const { row: c, p } of parsed) {
        const now = await p.kind.fingerprint(tx, projectId, p.body);
        const summary = p.kind.describe(projectId, p.body).summary.slice(0, 2000);
        await refingerprint(tx, row.id, Number(c.position), now, summary);
        moved.push({ position: Number(c.position), was: c.fingerprint, now });
      }
      await clearApprovals(tx, row.id);
      await reopenStale(tx, row.id, nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.rebase, subjectId: row.id, subjectName: row.title, actor, detail: { changes: moved } });
      await emitEvent(tx, { projectId, type: "request.rebased", payload: { requestId: row.id, title: row.title, state: "open", changes: moved.map((m) => `${m.was} → ${m.now}`), actor: actor.email } });
    });
  }

  /**
   * Publishes exactly the stored changes, in order, in ONE transaction with the audit row (each kind's apply joins
   * it, as the approved path past the direct-publish guard). A change whose target moved since the request was
   * opened makes it stale (committed, audited) and answers 409: it must be opened again against what is published.
   */
  async apply(projectId: string, idOrPrefix: string, actor: AuditActor): Promise<ChangeRequest> {
    const outcome = await this.ctx.store.write(async (tx) => {
      const row = await this.lockRow(tx, projectId, idOrPrefix);
      if (row.state !== "approved") throw validation(`Change request ${row.id} is ${row.state}`, `state: ${row.state}; only an approved request is applied`);
      this.refuseIfHeld(row, "apply");
      const stored = await changesOf(tx, [row.id]);
      const parsed = stored.map((c) => ({ row: c, p: this.changes.of(JSON.parse(c.change) as StoredChange) }));
      for (const { row: c, p } of parsed) {
        const now = await p.kind.fingerprint(tx, projectId, p.body);
        if (now !== c.fingerprint) {
          const note = `change ${Number(c.position)} (${c.summary}) moved: ${c.fingerprint} when opened, ${now} now`;
          await setState(tx, row.id, "approved", "stale", null, note, nowIso());
          await recordAudit(tx, { projectId, action: ACTIONS.stale, subjectId: row.id, subjectName: row.title, actor, detail: { position: Number(c.position), was: c.fingerprint, now } });
          await emitEvent(tx, { projectId, type: "request.stale", payload: { requestId: row.id, title: row.title, state: "stale", note, actor: actor.email } });
          return { id: row.id, stale: note };
        }
      }
      const results: { summary: string; before: string; after: string }[] = [];
      await runApproved(async () => {
        for (const { row: c, p } of parsed) {
          await p.kind.apply(projectId, p.body, actor);
          results.push({ summary: c.summary, before: c.fingerprint, after: await p.kind.fingerprint(tx, projectId, p.body) });
        }
      }, { type: "request", id: row.id });
      await setState(tx, row.id, "approved", "applied", actor.email, null, nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.apply, subjectId: row.id, subjectName: row.title, actor, detail: { changes: results } });
      await emitEvent(tx, { projectId, type: "request.applied", payload: { requestId: row.id, title: row.title, state: "applied", changes: results.map((r) => r.summary), actor: actor.email } });
      return { id: row.id, stale: null };
    });
    if (outcome.stale) throw new ApiError("CONFLICT", `Change request ${outcome.id} is stale: what it changes moved since it was opened`, `${outcome.stale}; open it again against what is published`);
    return this.get(projectId, outcome.id);
  }

  private mustBePerson(principal: Principal, verb: string): void {
    if (!PEOPLE.includes(principal.kind)) throw forbidden(`Only people ${verb} change requests`, `credential: ${principal.kind} cannot ${verb}; sign in (svc login or the dashboard)`);
    if (!principal.permissions.includes("write")) throw forbidden(`Your role cannot ${verb} change requests`, `role: ${principal.role ?? "none"}; an editor or owner may`);
  }

  private async lockRow(tx: Tx, projectId: string, idOrPrefix: string): Promise<RequestRow> {
    const found = await findRequest(tx, projectId, idOrPrefix);
    if (!found) throw notFound(`Change request ${idOrPrefix} not found`);
    // Decisions and applies of one request take turns: of two concurrent applies exactly one publishes.
    await tx.lock(`change-request:${found.id}`);
    return (await findRequest(tx, projectId, found.id))!;
  }

  private async transition(projectId: string, idOrPrefix: string, from: RequestState[], _actor: AuditActor, fn: (tx: Tx, row: RequestRow) => Promise<void>): Promise<ChangeRequest> {
    return this.ctx.store.write(async (tx) => {
      const row = await this.lockRow(tx, projectId, idOrPrefix);
      if (!from.includes(row.state)) throw validation(`Change request ${row.id} is ${row.state}`, `state: ${row.state}; expected ${from.join(" or ")}`);
      await fn(tx, row);
      return this.get(projectId, row.id, tx);
    });
  }

  private async load(q: Queryable, rows: RequestRow[]): Promise<ChangeRequest[]> {
    const ids = rows.map((r) => r.id);
    const changes = await changesOf(q, ids);
    const approvals = await approvalsOf(q, ids);
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      reason: r.reason,
      state: r.state,
      author: r.author,
      approvalsRequired: Number(r.approvals_required),
      approvals: approvals.filter((a) => a.request_id === r.id).map((a) => ({ by: a.approver, at: a.created_at })),
      decidedBy: r.decided_by,
      note: r.note,
      heldBy: r.held_by,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      changes: changes.filter((c) => c.request_id === r.id).map((c) => this.toChange(r.project_id, c)),
    }));
  }

  private toChange(projectId: string, c: { position: number | string; change: string; summary: string; fingerprint: string }): RequestChange {
    const change = JSON.parse(c.change) as StoredChange;
    let description;
    try {
      const p = this.changes.of(change);
      description = p.kind.describe(projectId, p.body);
    } catch {
      description = undefined;
    }
    return {
      position: Number(c.position),
      change,
      kind: change.kind,
      target: description?.target ?? { type: change.kind.split(".")[0]!, name: String(change.name ?? "") },
      env: description?.env ?? null,
      summary: c.summary,
      fingerprint: c.fingerprint,
    };
  }
}
