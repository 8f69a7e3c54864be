import { guardPublish } from "../../lib/approvals";
import { recordAudit } from "../../lib/audit";
import { ENVS, type Env } from "../../lib/envs";
import { ApiError, alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso, randomBase62 } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Queryable, Tx } from "../../lib/store";
import { checkResourceName } from "../../lib/validate";
import { Versioned } from "../../lib/versioned";
import { CONTEXT_BYTES_MAX, type EvaluationContext, type GateExplanation, type GateRule, type Gate as EvaluatedGate, contextBytes, createGateEvaluator } from "../../sdk/gates";
import { compileRegex } from "../../lib/re2";
import { type RuleGraph, checkConfigsReaching, checkEvaluationCost, checkRolloutCost, withSegmentCosts } from "./cost";
import { checkPrerequisites, checkRules, referencedGates, referencedSegments } from "./rules";
import { type Content, type EnvRow, type GateRow, insertGate, parseRules, setGateDescription, toEnvState, toGate, touchGate } from "./store";
import { GateTemplatesService } from "./templates";
import {
  ACTIONS,
  type Actor,
  type CreateGateInput,
  DESCRIPTION_MAX,
  type Gate,
  type GateEnvState,
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_LIMIT,
  type HistoryEntry,
  NAME_MAX,
  type PublishedGate,
} from "./types";

export * from "./types";

const versioned = new Versioned<GateRow>({
  scope: "gates",
  entity: "gates",
  entityColumns: ["id", "name", "description", "salt", "created_at", "updated_at"],
  live: "gate_envs",
  versions: "gate_versions",
  ref: "gate_id",
  content: ["rules"],
  liveExtra: ["updated_by"],
  versionExtra: ["action"],
  notFound: (idOrName) => notFound(`Gate ${idOrName} not found`),
  historyLimit: { default: HISTORY_DEFAULT_LIMIT, max: HISTORY_MAX_LIMIT },
});

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "gate_", slashReason: "'/' is not allowed in names used as flag keys and in paths" });
  // /api/admin/gates/templates is the templates' path: a gate of that name could never be read by name.
  if (name === "templates") throw validation("name must not be templates", "name: templates is reserved (the path of gate templates)");
}

function checkDescription(description: string): void {
  if (description.length > DESCRIPTION_MAX) throw validation(`description must be at most ${DESCRIPTION_MAX} characters`, `description: ${description.length} characters`);
}

const duplicateName = (name: string) => alreadyExists(`A gate named ${name} already exists in this project`, "name: choose another name");

/**
 * Gates: an ordered rule list per env, versioned like killswitches (every
 * change is one transaction that locks the gate, publishes version + 1,
 * bumps the env's revision and records its audit row). Evaluation is the
 * SDK's own evaluator (src/sdk/gates.ts), so explain, OFREP and SDKs agree.
 */
export class GatesService {
  readonly templates: GateTemplatesService;

  constructor(private readonly ctx: ServiceContext) {
    this.templates = new GateTemplatesService(ctx);
  }

  /** The snapshot's `gates` section: every gate published on the env, by name (no prototype: request keys find only real gates). */
  async publishedForEnv(projectId: string, env: Env): Promise<Record<string, PublishedGate>> {
    const out: Record<string, PublishedGate> = Object.create(null);
    const salts = new Map((await versioned.ofProject(this.ctx.store, projectId)).map((g) => [g.name, g.salt]));
    for (const r of await versioned.published<Content>(this.ctx.store, projectId, env)) {
      const salt = salts.get(r.name);
      if (salt !== undefined) out[r.name] = { salt, rules: parseRules(r.rules), version: r.version };
    }
    return out;
  }

  async create(projectId: string, input: CreateGateInput, actor: Actor): Promise<Gate> {
    checkName(input.name);
    const description = input.description ?? "";
    checkDescription(description);
    if (input.template !== undefined && input.rules !== undefined) throw validation("Give rules or a template, not both", "template: a gate starts from a template or from its own rules");
    if (input.passPercentage !== undefined && input.template === undefined) throw validation("passPercentage goes with a template", "passPercentage: only when starting from a template");
    const fromTemplate = input.template === undefined ? undefined : await this.templates.get(projectId, input.template);
    const rules = checkRules(fromTemplate ? [{ name: fromTemplate.name, conditions: fromTemplate.rules, passPercentage: input.passPercentage ?? 100 }] : (input.rules ?? []));
    try {
      return await this.ctx.store.write(async (tx) => {
        await versioned.lockProject(tx, projectId);
        if (await versioned.findByName(tx, projectId, input.name)) throw duplicateName(input.name);
        for (const env of ENVS) await this.checkPublishable(tx, projectId, env, input.name, rules);
        // Without rules it is false for everyone, as if absent; with rules it serves at once (a gate.create request where approval is required).
        for (const env of rules.length > 0 ? ENVS : []) await guardPublish(tx, { projectId, env, resource: "gates", subject: input.name, actor, kind: "gate.create" });
        const id = newId("gate");
        const now = nowIso();
        await insertGate(tx, { id, projectId, name: input.name, description, salt: randomBase62(16), now });
        await versioned.publishFirst(tx, { projectId, id, content: { rules: JSON.stringify(rules) }, liveExtra: { updated_by: actor.email }, versionExtra: { action: ACTIONS.create }, actor, now });
        await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: id, subjectName: input.name, actor, detail: { rules: rules.length, version: 1 } });
        return this.load(tx, await versioned.resolve(tx, projectId, id));
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  async list(projectId: string, q?: string): Promise<Gate[]> {
    const { store } = this.ctx;
    const matching = filterByQuery(await versioned.ofProject(store, projectId), q, (g) => [g.name, g.description]);
    if (matching.length === 0) return [];
    const envs = new Map<string, Partial<Record<Env, GateEnvState>>>();
    for (const r of await versioned.liveOfProject<EnvRow & { gate_id: string }>(store, projectId)) {
      let entry = envs.get(r.gate_id);
      if (!entry) envs.set(r.gate_id, (entry = {}));
      entry[r.env] = toEnvState(r);
    }
    return matching
      .filter((g) => envs.has(g.id))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((g) => toGate(g, envs.get(g.id) as Record<Env, GateEnvState>));
  }

  /** The env's published version, read through `q` (a transaction's, to read inside it): a pending change's staleness check (src/lib/changes.ts). */
  async publishedVersion(q: Queryable, projectId: string, idOrName: string, env: Env): Promise<number> {
    const row = await versioned.resolve(q, projectId, idOrName);
    return Number((await versioned.current(q, row.id, env)).version);
  }

  /** The env's published rules and version, read through `q`: a change request's "published now" (src/lib/changes.ts). */
  async publishedState(q: Queryable, projectId: string, idOrName: string, env: Env): Promise<GateEnvState> {
    const row = await versioned.resolve(q, projectId, idOrName);
    return toEnvState(await versioned.current<EnvRow>(q, row.id, env));
  }

  async get(projectId: string, idOrName: string): Promise<Gate> {
    const { store } = this.ctx;
    const gate = await this.load(store, await versioned.resolve(store, projectId, idOrName));
    if (Object.keys(gate.envs).length < ENVS.length) throw versioned.tables.notFound(idOrName);
    return gate;
  }

  async updateDescription(projectId: string, idOrName: string, description: string, actor: Actor): Promise<Gate> {
    checkDescription(description);
    return this.ctx.store.write(async (tx) => {
      const row = await versioned.lock(tx, projectId, idOrName);
      await setGateDescription(tx, row.id, description, nowIso());
      await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: row.id, subjectName: row.name, actor, detail: { description: description.length } });
      return this.load(tx, { ...row, description });
    });
  }

  /**
   * For a body that names a gate (an experiment's gate or override, a
   * rollout's subject), in the caller's transaction: takes the gate's lock,
   * the one its delete takes (so it stays until that transaction commits),
   * and answers it; undefined when the project has no gate by that id or name.
   */
  async lockReference(tx: Tx, projectId: string, idOrName: string): Promise<{ id: string; name: string } | undefined> {
    try {
      const row = await versioned.lock(tx, projectId, idOrName);
      return { id: row.id, name: row.name };
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  /** Deletes a gate nothing uses: no other gate's or config's rules (on any env), no unfinished experiment or rollout (VALIDATION naming them). */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      // The project's lock first, as every publish takes it: no rule can start naming this gate meanwhile.
      await versioned.lockProject(tx, projectId);
      const row = await versioned.lock(tx, projectId, idOrName);
      const dependents = new Set<string>();
      for (const env of ENVS) {
        for (const g of await versioned.published<Content>(tx, projectId, env)) {
          if (g.name !== row.name && referencedGates(parseRules(g.rules)).some((r) => r.name === row.name)) dependents.add(`${g.name} (${env})`);
        }
        // A config's rules naming it would be left naming a gate that is gone.
        for (const c of await this.ctx.services.configs.rulesNamingGates(tx, projectId, env)) {
          if (referencedGates(c.rules).some((r) => r.name === row.name)) dependents.add(`config ${c.name} (${env})`);
        }
      }
      if (dependents.size > 0) {
        const names = [...dependents].join(", ");
        throw validation(`Gate ${row.name} is a prerequisite of ${names}; change their rules first`, `id: named by passes_gate/fails_gate in the rules of ${names}`);
      }
      await this.ctx.services.experiments.refuseIfUsed(tx, projectId, "gate", row.name);
      await this.ctx.services.rollouts.refuseIfRolling(tx, projectId, "gate", row.name);
      await versioned.remove(tx, projectId, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.name, actor });
    });
  }

  /**
   * Publishes a new rule list on one env (checked: operators, values,
   * prerequisites and their cycles). Attributes nobody declared or saw, and
   * deprecated ones, are warnings in the answer, not errors.
   */
  async setRules(projectId: string, idOrName: string, env: Env, input: unknown, actor: Actor): Promise<{ id: string; env: Env; version: number; rules: GateRule[]; warnings: string[] }> {
    const rules = checkRules(input);
    const published = await this.publish(projectId, idOrName, env, ACTIONS.rules, actor, async (row, tx) => {
      await this.checkPublishable(tx, projectId, env, row.name, rules);
      return rules;
    });
    return { ...published, warnings: await this.warnings(projectId, rules) };
  }

  /** Warnings about the attributes a rule list names (see setRules). */
  async warnings(projectId: string, rules: GateRule[]): Promise<string[]> {
    const attrs: { name: string; field: string }[] = [];
    rules.forEach((r, i) => {
      r.conditions.forEach((c, j) => {
        if (c.op !== "passes_gate" && c.op !== "fails_gate" && c.op !== "in_segment" && c.op !== "not_in_segment") attrs.push({ name: c.attr, field: `rules[${i}].conditions[${j}].attr` });
      });
      if (r.unit && r.passPercentage > 0 && r.passPercentage < 100) attrs.push({ name: r.unit, field: `rules[${i}].unit` });
    });
    return this.ctx.services.attributes.warningsFor(projectId, attrs);
  }

  async rollback(projectId: string, idOrName: string, input: { env: Env; version: number }, actor: Actor): Promise<{ id: string; env: Env; version: number; rules: GateRule[] }> {
    return this.publish(projectId, idOrName, input.env, ACTIONS.rollback, actor, async (row, tx) => {
      const target = await versioned.version<Content>(tx, row.id, input.env, input.version);
      if (!target) throw notFound(`Gate ${row.name} has no version ${input.version} on ${input.env}`, `version: 1 to the current version`);
      const rules = parseRules(target.rules);
      // The gates it named may have changed since: the same checks as any publish.
      await this.checkPublishable(tx, projectId, input.env, row.name, rules);
      return rules;
    });
  }

  async history(projectId: string, idOrName: string, options: { env?: Env; limit?: number } = {}): Promise<HistoryEntry[]> {
    const rows = await versioned.history<Content & { action: string }>(this.ctx.store, projectId, idOrName, options);
    return rows.map((r) => ({ env: r.env, version: r.version, rules: parseRules(r.rules), action: r.action, actorEmail: r.actor_email, actorType: r.actor_type, createdAt: r.created_at }));
  }

  /** What the gate answers for a context on an env, which rule decided, and why each earlier rule did not. */
  async explain(projectId: string, idOrName: string, env: Env, context: EvaluationContext): Promise<GateExplanation & { gate: string; env: Env; version: number }> {
    const bytes = contextBytes(context);
    if (bytes > CONTEXT_BYTES_MAX) throw validation("The evaluation context is too large", `context: ${bytes} bytes of JSON; at most ${CONTEXT_BYTES_MAX} (64 KiB)`);
    const gate = await this.get(projectId, idOrName);
    const published = await this.publishedForEnv(projectId, env);
    const segments = await this.ctx.services.segments.publishedForEnv(projectId, env);
    const evaluator = createGateEvaluator({ compileRegex, gate: (name) => published[name] as EvaluatedGate | undefined, segment: (name) => segments[name] });
    const state = gate.envs[env];
    return { gate: gate.name, env, version: state.version, ...evaluator.explain({ salt: gate.salt, rules: state.rules }, context) };
  }

  private async load(q: Queryable, row: GateRow): Promise<Gate> {
    const envs = {} as Record<Env, GateEnvState>;
    for (const r of await versioned.live<EnvRow>(q, row.id)) envs[r.env] = toEnvState(r);
    return toGate(row, envs);
  }

  /** Each published gate's rules on the env, by name. */
  private async publishedRules(q: Queryable, projectId: string, env: Env): Promise<RuleGraph> {
    const graph: RuleGraph = new Map();
    for (const r of await versioned.published<Content>(q, projectId, env)) graph.set(r.name, parseRules(r.rules));
    return graph;
  }

  /**
   * The checks of any publish of `name`'s rules on an env, inside its transaction: the gates they
   * name exist and form no cycle, and no evaluation, of this gate or of one that reaches it, could
   * cost more than the bound (cost.ts).
   */
  private async checkPublishable(q: Queryable, projectId: string, env: Env, name: string, rules: GateRule[]): Promise<void> {
    const before = await this.publishedRules(q, projectId, env);
    const after: RuleGraph = new Map(before).set(name, rules);
    const prerequisites = new Map<string, string[]>();
    for (const [gate, its] of after) prerequisites.set(gate, referencedGates(its).map((x) => x.name));
    checkPrerequisites(name, rules, prerequisites);
    // A segment named by this list must exist (VALIDATION naming the field); every segment the env's rules name is priced.
    // Config rules naming gates cost what the gates they reach cost: priced again with this change (issue 29's rules).
    const configs = await this.ctx.services.configs.rulesNamingGates(q, projectId, env);
    const names = new Set<string>();
    for (const its of after.values()) for (const ref of referencedSegments(its)) names.add(ref.name);
    for (const config of configs) for (const ref of referencedSegments(config.rules)) names.add(ref.name);
    const costs = await this.ctx.services.segments.costs(q, projectId, [...names]);
    for (const ref of referencedSegments(rules)) {
      if (!costs.has(ref.name)) throw validation(`Segment ${ref.name} not found`, `${ref.field}: no segment named ${ref.name} in this project`);
    }
    withSegmentCosts(costs, () => {
      checkEvaluationCost(name, rules, before, after);
      checkConfigsReaching(name, configs, before, after);
    });
  }

  /**
   * A rollout's new rules for a gate on an env are evaluated in place of its published ones: the segments
   * they name must exist (VALIDATION naming the field), and the same bound, segments priced.
   */
  async checkRolloutRules(q: Queryable, projectId: string, env: Env, name: string, rules: GateRule[]): Promise<void> {
    const published = await this.publishedRules(q, projectId, env);
    // Every segment the rules, or a gate they reach, name is priced.
    const names = new Set(referencedSegments(rules).map((r) => r.name));
    for (const its of published.values()) for (const ref of referencedSegments(its)) names.add(ref.name);
    const costs = await this.ctx.services.segments.costs(q, projectId, [...names]);
    for (const ref of referencedSegments(rules)) {
      if (!costs.has(ref.name)) throw validation(`Segment ${ref.name} not found`, `${ref.field}: no segment named ${ref.name} in this project`);
    }
    withSegmentCosts(costs, () => checkRolloutCost(name, rules, published));
  }

  /**
   * A config's rules on an env (issue 29), whose conditions are gate conditions: the gates and segments
   * they name must exist, and one evaluation stays within the bound, priced over the env's published
   * gates as a rollout's rules are. `label` names the config in messages.
   */
  async checkConfigRules(q: Queryable, projectId: string, env: Env, label: string, rules: GateRule[]): Promise<void> {
    const graph = await this.publishedRules(q, projectId, env);
    for (const ref of referencedGates(rules)) {
      if (!graph.has(ref.name)) throw validation(`Gate ${ref.name} not found`, `${ref.field}: no gate named ${ref.name} in this project`);
    }
    const names = new Set<string>();
    for (const its of graph.values()) for (const ref of referencedSegments(its)) names.add(ref.name);
    for (const ref of referencedSegments(rules)) names.add(ref.name);
    const costs = await this.ctx.services.segments.costs(q, projectId, [...names]);
    for (const ref of referencedSegments(rules)) {
      if (!costs.has(ref.name)) throw validation(`Segment ${ref.name} not found`, `${ref.field}: no segment named ${ref.name} in this project`);
    }
    try {
      withSegmentCosts(costs, () => checkRolloutCost(label, rules, graph));
    } catch (err) {
      // The gates' words name a gate; these rules are a config's.
      if (err instanceof ApiError && err.code === "VALIDATION") throw validation(err.message.replace(/^Gate /, ""), err.detail);
      throw err;
    }
  }

  /** The project's gates lock: segment writes take it first (as every publish does), so no publish starts naming a segment being changed or deleted. */
  lockProject(tx: Tx, projectId: string): Promise<void> {
    return versioned.lockProject(tx, projectId);
  }

  /**
   * Refuses a segment change (its conditions now costing `cost`) that would take a gate naming it on the
   * env over the evaluation bound (cost.ts): VALIDATION on the segment's `conditions`, naming the gate.
   */
  async checkSegmentChange(q: Queryable, projectId: string, env: Env, segment: string, cost: number): Promise<void> {
    const graph = await this.publishedRules(q, projectId, env);
    const names = new Set<string>();
    for (const its of graph.values()) for (const ref of referencedSegments(its)) names.add(ref.name);
    const before = await this.ctx.services.segments.costs(q, projectId, [...names]);
    const costs = new Map(before).set(segment, cost);
    const within = (gate: string, rules: GateRule[], with_: Map<string, number>) => {
      try {
        withSegmentCosts(with_, () => checkRolloutCost(gate, rules, graph));
        return true;
      } catch {
        return false;
      }
    };
    // Each published gate, then each unfinished rollout's new rules on the env (evaluated in place of its gate's).
    const evaluated: { what: string; gate: string; rules: GateRule[] }[] = [...graph].map(([gate, rules]) => ({ what: `gate ${gate}`, gate, rules }));
    for (const r of await this.ctx.services.rollouts.gateRules(q, projectId)) {
      if (r.env === env && referencedSegments(r.rules).some((ref) => ref.name === segment)) evaluated.push({ what: `rollout ${r.id} of gate ${r.gate}`, gate: r.gate, rules: r.rules });
    }
    for (const { what, gate, rules } of evaluated) {
      // A gate over the bound before the change (published before the bound existed) does not block it.
      if (!within(gate, rules, before)) continue;
      try {
        withSegmentCosts(costs, () => checkRolloutCost(gate, rules, graph));
      } catch (err) {
        if (err instanceof ApiError && err.code === "VALIDATION") throw validation(`${what[0]!.toUpperCase()}${what.slice(1)} names this segment and would cost too much to evaluate`, `conditions: ${what} (${env}) would go over the evaluation bound with these conditions (${err.detail ?? err.message})`);
        throw err;
      }
    }
  }

  /** The segments an env's published rules name, and the new rules of the rollouts serving on it. */
  async segmentsUsed(q: Queryable, projectId: string, env: Env): Promise<Set<string>> {
    const names = new Set<string>();
    for (const rules of (await this.publishedRules(q, projectId, env)).values()) for (const ref of referencedSegments(rules)) names.add(ref.name);
    for (const r of await this.ctx.services.rollouts.gateRules(q, projectId)) if (r.env === env && r.serving) for (const ref of referencedSegments(r.rules)) names.add(ref.name);
    return names;
  }

  /**
   * Where a segment is used: each gate as `name (env)` (`gates`); `users`, what its DELETE answer names:
   * those gates, the unfinished rollouts whose rules name it and the templates holding it; and the envs
   * where rules name it (republished, and priced, when it changes).
   */
  async segmentUses(q: Queryable, projectId: string, segment: string): Promise<{ gates: string[]; users: string[]; envs: Env[] }> {
    const gates: string[] = [];
    const envs = new Set<Env>();
    for (const env of ENVS) {
      for (const [gate, rules] of await this.publishedRules(q, projectId, env)) {
        if (referencedSegments(rules).some((r) => r.name === segment)) {
          gates.push(`${gate} (${env})`);
          envs.add(env);
        }
      }
    }
    const users = gates.map((g) => `gate ${g}`);
    for (const r of await this.ctx.services.rollouts.gateRules(q, projectId)) {
      if (!referencedSegments(r.rules).some((ref) => ref.name === segment)) continue;
      users.push(`rollout ${r.id} of gate ${r.gate} (${r.env})`);
      // A scheduled one too: its rules are priced against the segment's next conditions.
      envs.add(r.env);
    }
    for (const template of await this.templates.segmentUsers(q, projectId, segment)) users.push(`template ${template}`);
    return { gates, users, envs: ENVS.filter((env) => envs.has(env)) };
  }

  /** The one publish path: lock the gate, compute the env's next rules (may refuse), publish version + 1, audit. */
  private publish(
    projectId: string,
    idOrName: string,
    env: Env,
    action: string,
    actor: Actor,
    next: (row: GateRow, tx: Tx) => Promise<GateRule[]>,
  ): Promise<{ id: string; env: Env; version: number; rules: GateRule[] }> {
    return this.ctx.store.write(async (tx) => {
      // Prerequisites are a decision over the project's gates: one writer at a time per project.
      await versioned.lockProject(tx, projectId);
      const row = await versioned.lock(tx, projectId, idOrName);
      const rules = await next(row, tx);
      const now = nowIso();
      const version = await versioned.publish(tx, { projectId, id: row.id, env, content: { rules: JSON.stringify(rules) }, liveExtra: { updated_by: actor.email }, versionExtra: { action }, actor, now });
      await touchGate(tx, row.id, now);
      await recordAudit(tx, { projectId, action, subjectId: row.id, subjectName: row.name, env, actor, detail: { version, rules: rules.length } });
      return { id: row.id, env, version, rules };
    });
  }
}
