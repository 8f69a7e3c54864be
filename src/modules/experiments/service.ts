// One piece: the experiment lifecycle (create, update, start, stop, results) with the design checks its writes share; analysis, guardrails and checks already live apart.
import { SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import type { Env } from "../../lib/envs";
import { ApiError, alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, randomBase62 } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import { bumpRevision } from "../../lib/revisions";
import type { Queryable, Tx } from "../../lib/store";
import type { PublishedExperiment } from "../../sdk/experiments";
import { lockScope as metricsLock } from "../metrics/service";
import { type SegmentRange, checkRange, lockScope, overlaps } from "../universes/service";
import { type Results, analyze } from "./analysis";
import { type AutoRollback, GuardrailWatcher, type RollbackNotifier } from "./guardrails";
import {
  type Guardrail,
  type GuardrailInput,
  type Variant,
  type VariantInput,
  checkDescription,
  checkEnv,
  checkGuardrailShapes,
  checkName,
  checkReason,
  checkVariants,
} from "./checks";
import {
  type ExperimentRow,
  deleteExperiment,
  toExperiment,
  experimentById,
  experimentByName,
  experimentsByIdPrefix,
  experimentsOfProject,
  experimentsUsing,
  insertExperiment,
  runningInUniverse,
  runningOnEnv,
  updateExperiment,
} from "./store";
import { STATUSES, type Actor, type ExperimentStatus, type Outcome, type Experiment } from "./types";
export { STATUSES, type Actor, type ExperimentStatus, type Outcome, type Experiment };
export { toExperiment };

export type ExperimentInput = {
  name: string;
  description?: string | null;
  universe: string;
  env?: string;
  variants: VariantInput[];
  allocation: readonly number[];
  gate?: string | null;
  primaryMetric?: string | null;
  guardrailMetrics?: GuardrailInput[];
};
export type ExperimentPatch = Partial<ExperimentInput>;
export type StopInput = { decision: "ship" | "rollback"; variant?: string | null; reason?: string | null };

export const ACTIONS = {
  create: "experiment.create",
  update: "experiment.update",
  delete: "experiment.delete",
  start: "experiment.start",
  stop: "experiment.stop",
} as const;

/** What may change in each state: a running experiment keeps its split, a stopped one its whole design. */
const CHANGEABLE: Record<ExperimentStatus, readonly (keyof ExperimentInput)[]> = {
  draft: ["name", "description", "universe", "env", "variants", "allocation", "gate", "primaryMetric", "guardrailMetrics"],
  running: ["name", "description", "primaryMetric", "guardrailMetrics"],
  stopped: ["name", "description"],
};

const rangeText = (r: SegmentRange) => `[${r[0]}, ${r[1]})`;
const duplicateName = (name: string) => alreadyExists(`An experiment named ${name} already exists in this project`, "name: choose another name");

type Resolved = { universeId: string; universeName: string; holdout: SegmentRange | null; primary: string | null; guardrails: Guardrail[] };

/**
 * Experiments: variants split over a segment range of a universe, measured
 * by metrics, draft → running → stopped. Every write runs under the
 * project's universes lock (the one a universe's holdout move or delete
 * takes), so a start never misses another start or a holdout change, and
 * records its audit row in the same transaction; a change to what is
 * published moves the env's revision, so SDKs see it.
 */
export class ExperimentsService {
  private readonly watcher: GuardrailWatcher;

  constructor(private readonly ctx: ServiceContext) {
    this.watcher = new GuardrailWatcher(ctx, (projectId, id, reason) => this.stop(projectId, id, { decision: "rollback", reason }, { ...SYSTEM_ACTOR, auto: true }));
  }

  /** Called once the services exist: universes ask here whether an experiment runs in them. */
  wire(): void {
    this.ctx.services.universes.setInUseCheck(async (q, _projectId, universeId) =>
      (await runningInUniverse(q, universeId)).map((r) => ({ name: r.name, allocation: [Number(r.allocation_start), Number(r.allocation_end)] as SegmentRange })),
    );
  }

  async list(projectId: string, options: { q?: string; status?: string } = {}): Promise<Experiment[]> {
    if (options.status !== undefined && !(STATUSES as readonly string[]).includes(options.status)) {
      throw validation("Unknown status", `status: one of ${STATUSES.join(", ")}`);
    }
    const names = await this.universeNamesOf(projectId);
    const rows = (await experimentsOfProject(this.ctx.store, projectId)).filter((r) => options.status === undefined || r.status === options.status);
    return filterByQuery(
      rows.map((r) => toExperiment(r, names.get(r.universe_id) ?? r.universe_id)),
      options.q,
      (e) => [e.name, e.description],
    );
  }

  async get(projectId: string, idOrName: string): Promise<Experiment> {
    return this.view(projectId, await this.find(this.ctx.store, projectId, idOrName));
  }

  /** The snapshot's `experiments` section of one env: running experiments by name. */
  async published(projectId: string, env: Env): Promise<Record<string, PublishedExperiment>> {
    const out: Record<string, PublishedExperiment> = Object.create(null);
    const rows = await runningOnEnv(this.ctx.store, projectId, env);
    if (rows.length === 0) return out;
    const names = await this.universeNamesOf(projectId);
    for (const r of rows) {
      const variants = JSON.parse(r.variants) as Variant[];
      out[r.name] = {
        id: r.id,
        universe: names.get(r.universe_id) ?? r.universe_id,
        salt: r.salt,
        allocation: [Number(r.allocation_start), Number(r.allocation_end)],
        variants: variants.map((v) => (v.override ? { key: v.key, weight: v.weight, value: v.value, override: v.override } : { key: v.key, weight: v.weight, value: v.value })),
        gate: r.gate,
      };
    }
    return out;
  }

  async create(projectId: string, input: ExperimentInput, actor: Actor): Promise<Experiment> {
    checkName(input.name);
    checkDescription(input.description);
    const env = checkEnv(input.env ?? "prod");
    const variants = checkVariants(input.variants);
    const allocation = checkRange(input.allocation, "allocation")!;
    const guardrailShapes = checkGuardrailShapes(input.guardrailMetrics ?? []);
    await this.checkReferences(projectId, env, variants);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        if (await experimentByName(tx, projectId, input.name)) throw duplicateName(input.name);
        const resolved = await this.resolve(tx, projectId, input.universe, input.primaryMetric ?? null, guardrailShapes);
        await this.lockReferences(tx, projectId, variants, input.gate ?? null);
        checkHoldout(allocation, resolved.holdout, resolved.universeName);
        const now = this.nowIso();
        const row: ExperimentRow = {
          id: newId("exp"),
          universe_id: resolved.universeId,
          name: input.name,
          description: input.description ?? null,
          env,
          status: "draft",
          variants: JSON.stringify(variants),
          allocation_start: allocation[0],
          allocation_end: allocation[1],
          gate: input.gate ?? null,
          primary_metric_id: resolved.primary,
          guardrail_metric_ids: JSON.stringify(resolved.guardrails),
          salt: randomBase62(16),
          started_at: null,
          stopped_at: null,
          outcome: null,
          created_at: now,
          updated_at: now,
        };
        await insertExperiment(tx, projectId, row);
        const created = toExperiment(row, resolved.universeName);
        await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: row.id, subjectName: row.name, actor, detail: designOf(created) });
        return created;
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  /**
   * Fields sent replace the stored ones, as far as the state allows (see
   * CHANGEABLE): VALIDATION naming a field that cannot change now. Nothing
   * different from what is stored: nothing is written.
   */
  async update(projectId: string, idOrName: string, patch: ExperimentPatch, actor: Actor): Promise<Experiment> {
    if (patch.name !== undefined) checkName(patch.name);
    checkDescription(patch.description);
    const variants = patch.variants === undefined ? undefined : checkVariants(patch.variants);
    const allocation = patch.allocation === undefined ? undefined : checkRange(patch.allocation, "allocation")!;
    const guardrailShapes = patch.guardrailMetrics === undefined ? undefined : checkGuardrailShapes(patch.guardrailMetrics);
    const env = patch.env === undefined ? undefined : checkEnv(patch.env);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        const row = await this.find(tx, projectId, idOrName);
        const status = row.status as ExperimentStatus;
        const sent = (Object.keys(patch) as (keyof ExperimentInput)[]).filter((k) => patch[k] !== undefined);
        const frozen = sent.filter((k) => !CHANGEABLE[status].includes(k));
        if (frozen.length > 0) {
          throw validation(
            `${frozen.join(", ")} cannot change while the experiment is ${status}`,
            frozen.map((f) => `${f}: fixed once the experiment is ${status} (${status === "running" ? "its units would change variant mid-test; stop it and create another" : "a stopped experiment is a record"})`).join("; "),
          );
        }
        const before = await this.view(projectId, row, tx);
        const nextEnv = env ?? (row.env as Env);
        const nextVariants = variants ?? (JSON.parse(row.variants) as Variant[]);
        const nextGate = patch.gate === undefined ? row.gate : patch.gate;
        const resolved = await this.resolve(
          tx,
          projectId,
          patch.universe ?? row.universe_id,
          patch.primaryMetric === undefined ? row.primary_metric_id : patch.primaryMetric,
          guardrailShapes ?? (JSON.parse(row.guardrail_metric_ids) as Guardrail[]),
        );
        if (variants !== undefined || patch.gate !== undefined || env !== undefined) {
          await this.lockReferences(tx, projectId, nextVariants, nextGate);
          await this.checkReferences(projectId, nextEnv, nextVariants);
        }
        const nextAllocation = allocation ?? ([Number(row.allocation_start), Number(row.allocation_end)] as SegmentRange);
        if (status === "draft") checkHoldout(nextAllocation, resolved.holdout, resolved.universeName);
        const next: ExperimentRow = {
          ...row,
          name: patch.name ?? row.name,
          description: patch.description === undefined ? row.description : patch.description,
          universe_id: resolved.universeId,
          env: nextEnv,
          variants: JSON.stringify(nextVariants),
          allocation_start: nextAllocation[0],
          allocation_end: nextAllocation[1],
          gate: nextGate,
          primary_metric_id: resolved.primary,
          guardrail_metric_ids: JSON.stringify(resolved.guardrails),
        };
        const after = toExperiment(next, resolved.universeName);
        const fields = CHANGEABLE.draft.filter((f) => JSON.stringify(fieldOf(before, f)) !== JSON.stringify(fieldOf(after, f)));
        if (fields.length === 0) return before;
        if (next.name !== row.name && (await experimentByName(tx, projectId, next.name))) throw duplicateName(next.name);
        next.updated_at = this.nowIso();
        await updateExperiment(tx, next);
        const pick = (e: Experiment) => Object.fromEntries(fields.map((f) => [f, fieldOf(e, f)]));
        await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: row.id, subjectName: next.name, actor, detail: { fields, before: pick(before), after: pick(after) } });
        // A running experiment is published under its name.
        if (status === "running" && fields.includes("name")) await bumpRevision(tx, projectId, nextEnv);
        return { ...after, updatedAt: next.updated_at };
      });
    } catch (err) {
      if (patch.name !== undefined && this.ctx.store.isUniqueViolation(err)) throw duplicateName(patch.name);
      throw err;
    }
  }

  /** Deletes a draft or stopped experiment (a running one: VALIDATION, stop it first). */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, idOrName);
      if (row.status === "running") throw validation(`Experiment ${row.name} is running; stop it first`, "status: running (POST /api/admin/experiments/{id}/stop)");
      await deleteExperiment(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.name, actor, detail: { status: row.status } });
    });
  }

  /**
   * draft → running: the allocation must avoid the universe's holdout and
   * every running experiment of the universe (checked under the universes
   * lock, so two starts cannot both pass), its gate and overrides must still
   * exist; then it is published on its env.
   */
  async start(projectId: string, idOrName: string, actor: Actor): Promise<Experiment> {
    const draft = await this.find(this.ctx.store, projectId, idOrName);
    if (draft.status === "draft") await this.checkReferences(projectId, draft.env as Env, JSON.parse(draft.variants) as Variant[]);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, draft.id);
      if (row.status !== "draft") throw validation(`Experiment ${row.name} is ${row.status}; only a draft starts`, `status: ${row.status}${row.status === "stopped" ? " (a stopped experiment stays stopped: create another)" : ""}`);
      const universe = await this.ctx.services.universes.resolve(tx, projectId, row.universe_id);
      await this.lockReferences(tx, projectId, JSON.parse(row.variants) as Variant[], row.gate);
      const allocation: SegmentRange = [Number(row.allocation_start), Number(row.allocation_end)];
      checkHoldout(allocation, universe.holdout_range, universe.name);
      const clashes = (await runningInUniverse(tx, row.universe_id)).filter((r) => overlaps(allocation, [Number(r.allocation_start), Number(r.allocation_end)]));
      if (clashes.length > 0) {
        const names = clashes.map((c) => `${c.name} ${rangeText([Number(c.allocation_start), Number(c.allocation_end)])}`).join(", ");
        throw validation(`The allocation overlaps running experiment${clashes.length > 1 ? "s" : ""} ${names}`, `allocation: ${rangeText(allocation)} overlaps ${names} in universe ${universe.name}: choose free segments or stop them first`);
      }
      const now = this.nowIso();
      const next: ExperimentRow = { ...row, status: "running", started_at: now, updated_at: now };
      await updateExperiment(tx, next);
      await recordAudit(tx, { projectId, action: ACTIONS.start, subjectId: row.id, subjectName: row.name, actor, detail: { env: row.env, universe: universe.name, allocation } });
      await bumpRevision(tx, projectId, row.env as Env);
      return toExperiment(next, universe.name);
    });
  }

  /** running → stopped, shipping a variant or rolling back; it leaves the snapshot. */
  async stop(projectId: string, idOrName: string, input: StopInput, actor: Actor & { auto?: boolean }): Promise<Experiment> {
    checkReason(input.reason);
    if (input.decision !== "ship" && input.decision !== "rollback") throw validation("Unknown decision", "decision: ship (with variant) or rollback");
    if (input.decision === "rollback" && input.variant) throw validation("A rollback ships no variant", "variant: only with decision ship");
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, idOrName);
      if (row.status !== "running") throw validation(`Experiment ${row.name} is ${row.status}; only a running experiment stops`, `status: ${row.status}`);
      const variants = JSON.parse(row.variants) as Variant[];
      if (input.decision === "ship") {
        if (!input.variant) throw validation("Say which variant ships", `variant: one of ${variants.map((v) => v.key).join(", ")}`);
        if (!variants.some((v) => v.key === input.variant)) throw validation("Unknown variant", `variant: ${input.variant} is not one of ${variants.map((v) => v.key).join(", ")}`);
      }
      const outcome: Outcome = { decision: input.decision, variant: input.variant ?? null, reason: input.reason ?? null, by: actor.email, auto: actor.auto === true };
      const now = this.nowIso();
      const next: ExperimentRow = { ...row, status: "stopped", stopped_at: now, outcome: JSON.stringify(outcome), updated_at: now };
      await updateExperiment(tx, next);
      await recordAudit(tx, { projectId, action: ACTIONS.stop, subjectId: row.id, subjectName: row.name, actor: { email: actor.email, type: actor.type }, detail: outcome });
      // An automatic rollback is news for the team: connectors hear it (a person's stop is theirs to tell).
      if (outcome.auto) await emitEvent(tx, { projectId, type: "experiment.rolled_back", payload: { experimentId: row.id, name: row.name, env: row.env, reason: outcome.reason, actor: actor.email } });
      await bumpRevision(tx, projectId, row.env as Env);
      return this.view(projectId, next, tx);
    });
  }

  /**
   * The analysis as of now (a stopped experiment: as of its stop), by the
   * project's analysis settings. A draft has no exposures: its reply is empty.
   */
  async results(projectId: string, idOrName: string): Promise<Results> {
    const experiment = await this.get(projectId, idOrName);
    const project = await this.ctx.services.projects.get(projectId);
    return analyze(this.ctx, projectId, experiment, project.analysis, this.ctx.services.analytics.now());
  }

  /** One guardrail round as of `nowMs` (the timer runs it every experimentsEveryMs): the experiments it rolled back. */
  checkGuardrails(nowMs = this.ctx.services.analytics.now()): Promise<AutoRollback[]> {
    return this.watcher.checkAll(nowMs);
  }

  /** Hears every automatic rollback (connectors, tests); answers its removal. */
  addRollbackNotifier(fn: RollbackNotifier): () => void {
    return this.watcher.addNotifier(fn);
  }

  close(): Promise<void> {
    return this.watcher.close();
  }

  /** Names of the experiments (draft or running) that measure a metric: metrics refuse to delete it. */
  metricUsers(q: Queryable, projectId: string, metricId: string): Promise<string[]> {
    return experimentsUsing(q, projectId, { kind: "metric", id: metricId });
  }

  /**
   * Refuses (VALIDATION naming them) to let a gate or config go while a draft
   * or running experiment targets or overrides it: gates and configs call
   * this in their delete transaction.
   */
  async refuseIfUsed(q: Queryable, projectId: string, kind: "gate" | "config", name: string): Promise<void> {
    const users = await experimentsUsing(q, projectId, { kind, name });
    if (users.length === 0) return;
    const plural = users.length > 1 ? "s" : "";
    throw validation(`The ${kind} ${name} is used by experiment${plural} ${users.join(", ")}; change or delete them first`, `id: used by experiment${plural} ${users.join(", ")}`);
  }

  /** ISO time by the analytics clock (tests move it), so start times and sample days agree with the events. */
  nowIso(): string {
    return new Date(this.ctx.services.analytics.now()).toISOString();
  }

  private async view(projectId: string, row: ExperimentRow, q: Queryable = this.ctx.store): Promise<Experiment> {
    const universe = await this.ctx.services.universes.resolve(q, projectId, row.universe_id).catch(() => undefined);
    return toExperiment(row, universe?.name ?? row.universe_id);
  }

  private async universeNamesOf(projectId: string): Promise<Map<string, string>> {
    return new Map((await this.ctx.services.universes.list(projectId)).map((u) => [u.id, u.name]));
  }

  /**
   * The universe and the metrics named in the body, as ids of the project
   * (NOT_FOUND naming the field when one is not the project's), under the
   * locks their deletes take (universes: the caller's; metrics: taken
   * here), so none goes before this transaction commits.
   */
  private async resolve(tx: Tx, projectId: string, universe: string, primary: string | null, guardrails: Guardrail[]): Promise<Resolved> {
    const u = await this.ctx.services.universes.resolve(tx, projectId, universe).catch((err) => {
      if (err instanceof ApiError && err.status === 404) throw notFound(`Universe ${universe} not found`, `universe: no universe ${universe} in this project (POST /api/admin/universes creates one)`);
      throw err;
    });
    const { metrics } = this.ctx.services;
    if (primary !== null || guardrails.length > 0) await tx.lock(metricsLock(projectId));
    const metricId = async (idOrName: string, field: string) => {
      const id = await metrics.resolveId(projectId, idOrName, tx);
      if (!id) throw notFound(`Metric ${idOrName} not found`, `${field}: no metric ${idOrName} in this project`);
      return id;
    };
    const primaryId = primary === null ? null : await metricId(primary, "primaryMetric");
    const resolvedGuardrails: Guardrail[] = [];
    for (const [i, g] of guardrails.entries()) {
      const id = await metricId(g.metric, `guardrailMetrics[${i}].metric`);
      if (resolvedGuardrails.some((r) => r.metric === id)) throw validation("A guardrail metric is named twice", `guardrailMetrics[${i}].metric: ${g.metric} appears twice`);
      resolvedGuardrails.push({ metric: id, worseWhen: g.worseWhen });
    }
    return { universeId: u.id, universeName: u.name, holdout: u.holdout_range, primary: primaryId, guardrails: resolvedGuardrails };
  }

  /**
   * The targeting gate and every override's gate or config are the
   * project's (NOT_FOUND naming the field otherwise), each locked as its
   * delete locks it, in the write's transaction: a gate or config deleted
   * meanwhile either sees the experiment (and refuses) or goes first (and
   * this refuses).
   */
  private async lockReferences(tx: Tx, projectId: string, variants: Variant[], gate: string | null): Promise<void> {
    const { gates, configs } = this.ctx.services;
    if (gate !== null && !(await gates.lockReference(tx, projectId, gate))) throw notFound(`Gate ${gate} not found`, `gate: no gate ${gate} in this project`);
    for (const [i, v] of variants.entries()) {
      const o = v.override;
      if (!o) continue;
      const at = `variants[${i}].override`;
      if (o.kind === "gate" && !(await gates.lockReference(tx, projectId, o.name))) throw notFound(`Gate ${o.name} not found`, `${at}.name: no gate ${o.name} in this project`);
      if (o.kind === "config" && !(await configs.lockReference(tx, projectId, o.name))) throw notFound(`Config ${o.name} not found`, `${at}.name: no config ${o.name} in this project`);
    }
  }

  /** A config override fits the config's schema (its existence is lockReferences' to decide, in the transaction). */
  private async checkReferences(projectId: string, env: Env, variants: Variant[]): Promise<void> {
    const { configs } = this.ctx.services;
    for (const [i, v] of variants.entries()) {
      const o = v.override;
      if (!o) continue;
      const at = `variants[${i}].override`;
      if (o.kind === "config") {
        const problems = await configs.valueProblems(projectId, o.name, o.value, `${at}.value`).catch((err) => {
          if (err instanceof ApiError && err.status === 404) throw notFound(`Config ${o.name} not found`, `${at}.name: no config ${o.name} in this project`);
          throw err;
        });
        if (problems.length > 0) throw validation(`The override of config ${o.name} does not match its schema (env ${env})`, problems.join("; "));
        // An experiment on a config's rule (issue 29): the rule exists on the env, and every variant names the same one.
        const others = variants.filter((w) => w.override?.kind === "config" && w.override.name === o.name).map((w) => (w.override as { rule?: string }).rule);
        if (others.some((r) => r !== o.rule)) throw validation(`The overrides of config ${o.name} name different rules`, `${at}.rule: every variant overriding config ${o.name} names the same rule (or none)`);
        if (o.rule !== undefined) {
          const rules = (await configs.get(projectId, o.name)).envs[env].rules;
          if (!rules.some((r) => r.name === o.rule)) {
            const named = rules.filter((r) => r.name).map((r) => r.name);
            throw validation(`Config ${o.name} has no rule named ${o.rule} on ${env}`, `${at}.rule: ${named.length > 0 ? `one of ${named.join(", ")}` : "its rules on this env have no names; name the rule first"}`);
          }
        }
      }
    }
  }

  /** By id, else by exact name, else by a unique id prefix (`exp_` and at least one more character). */
  private async find(q: Queryable, projectId: string, idOrName: string): Promise<ExperimentRow> {
    const row = (await experimentById(q, projectId, idOrName)) ?? (await experimentByName(q, projectId, idOrName));
    if (row) return row;
    if (idOrName.startsWith("exp_") && idOrName.length > 4) {
      const rows = await experimentsByIdPrefix(q, projectId, idOrName);
      if (rows.length === 1) return rows[0]!;
      if (rows.length > 1) throw notFound(`Experiment id prefix ${idOrName} matches several experiments`, "id: give more of the id, or the name");
    }
    throw notFound(`Experiment ${idOrName} not found`);
  }
}

function checkHoldout(allocation: SegmentRange, holdout: SegmentRange | null, universe: string): void {
  if (holdout && overlaps(allocation, holdout)) {
    throw validation(`The allocation overlaps the holdout of universe ${universe}`, `allocation: ${rangeText(allocation)} overlaps the holdout ${rangeText(holdout)}; its units are given to no experiment`);
  }
}

function fieldOf(e: Experiment, field: keyof ExperimentInput): unknown {
  return field === "universe" ? e.universeId : e[field];
}

/** What the create audit row keeps: the design (not the timestamps). */
function designOf(e: Experiment): Record<string, unknown> {
  return { universe: e.universe, env: e.env, variants: e.variants, allocation: e.allocation, gate: e.gate, primaryMetric: e.primaryMetric, guardrailMetrics: e.guardrailMetrics };
}
