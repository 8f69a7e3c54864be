// One piece: configs with their drafts, history and rollback, which share versioned writes and the JSON Schema checks of values.
import { guardPublish } from "../../lib/approvals";
import { recordAudit } from "../../lib/audit";
import { emitEvent } from "../../lib/outbox";
import { ENVS, type Env } from "../../lib/envs";
import { ApiError, alreadyExists, notFound, unavailable, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Queryable, Tx } from "../../lib/store";
import { compileRegex } from "../../lib/re2";
import { type ConfigExplanation, type ConfigRule, type PublishedConfig, explainConfig } from "../../sdk/configs";
import { CONTEXT_BYTES_MAX, type EvaluationContext, type GateRule, type PublishedSegment, contextBytes, createGateEvaluator } from "../../sdk/gates";
import { referencedGates, referencedSegments } from "../gates/rules";
import { asGateRules, checkConfigRules, publicRules, ruleValues, withRanges } from "./rules";
import { checkLimit, checkResourceName } from "../../lib/validate";
import { Versioned } from "../../lib/versioned";
import { checkValueBounds, prepareSchema, rootDefault } from "./json-schema";
import { type SchemaCheck, SchemaChecker } from "./schema-checker";
import {
  type ConfigRow,
  type ValueRow,
  type VersionRow,
  bumpChangeSeq,
  parseRules,
  byEnvName,
  deleteDraft,
  findDraft,
  groupBy,
  insertActivity,
  insertConfig,
  listActivity,
  listDrafts,
  listDraftsOfProject,
  setConfigDescription,
  setConfigSchema,
  sortByEnv,
  toConfig,
  toDraft,
  touchConfig,
  upsertDraft,
} from "./store";
import {
  ACTIONS,
  ACTIVITY_DEFAULT_LIMIT,
  ACTIVITY_MAX_LIMIT,
  AUDIT_ONLY_ACTIONS,
  type ActivityRow,
  type Actor,
  type Config,
  type CreateInput,
  DESCRIPTION_MAX,
  type Draft,
  HISTORY_DEFAULT_LIMIT,
  HISTORY_MAX_LIMIT,
  type HistoryEntry,
  NAME_MAX,
  type PatchInput,
  type PatchResult,
  VALUE_MAX_BYTES,
} from "./types";

export * from "./types";
/** Tries of an optimistic write whose config changed between validation and commit, at least... */
const WRITE_ATTEMPTS = 5;
/** ...and for about this long (other servers writing the same config), before 503. */
const WRITE_BUDGET_MS = 1000;
/** Returned by a commit step when the config moved since it was validated: validate again. */
const STALE = Symbol("stale");

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "cfg_", slashReason: "'/' is not allowed in names used as keys and in paths" });
}

function checkDescription(description: string): void {
  if (description.length > DESCRIPTION_MAX) {
    throw validation(`description must be at most ${DESCRIPTION_MAX} characters`, `description: ${description.length} characters`);
  }
}

/** JSON text of a config value, refused when it is too large, too deeply nested or has too many items. */
function valueJson(value: unknown, field: string): string {
  if (value === undefined) throw validation(`${field} is required`, `${field}: any JSON value (null included)`);
  checkValueBounds(value, field);
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json);
  if (bytes > VALUE_MAX_BYTES) throw validation(`${field} is too large`, `${field}: ${bytes} bytes of JSON; at most ${VALUE_MAX_BYTES}`);
  return json;
}

function failIfProblems(message: string, problems: string[]): void {
  if (problems.length > 0) throw validation(message, problems.join("; "));
}

function duplicateName(name: string) {
  return alreadyExists(`A config named ${name} already exists in this project`, "name: choose another name");
}

/** The tables of the shared versioned-per-env publish path (src/lib/versioned.ts). */
const versioned = new Versioned<ConfigRow>({
  scope: "configs",
  entity: "configs",
  entityColumns: ["id", "name", "description", "schema", "schema_hash", "change_seq", "created_at", "updated_at"],
  live: "config_values",
  versions: "config_versions",
  ref: "config_id",
  content: ["value", "rules"],
  notFound: (idOrName) => notFound(`No config ${idOrName} in this project`),
  historyLimit: { default: HISTORY_DEFAULT_LIMIT, max: HISTORY_MAX_LIMIT },
});

/**
 * Dynamic configs: JSON values per env, validated against the config's JSON
 * Schema, with drafts, publish, history and an activity log. Every change is
 * one write transaction that locks the config (`configs:<projectId>:<id>`,
 * on every server), writes its activity row and its audit row, and bumps the
 * revision of each env whose published value moved.
 *
 * Validation can cost real CPU, so it never runs while the write lock is
 * held: a change reads the config, validates, then commits only if the
 * config's `change_seq` has not moved meanwhile (else it validates again).
 * Writers of one config in this process that lost that check retry in turn.
 */
export class ConfigsService {
  /** Every value check goes through here: off the request loop, under a time budget (schema-checker.ts). */
  private readonly checker = new SchemaChecker();
  /** The tail of each config's queue of writers retrying an optimistic write in this process, by `projectId:configId`. */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Everything published on one env, by config name: the SDK snapshot's
   * `configs` section. The map has no prototype, so a lookup by a key from a
   * request (`constructor`, `__proto__`) finds only real configs.
   */
  async publishedForEnv(projectId: string, env: Env): Promise<Record<string, PublishedConfig>> {
    const out: Record<string, PublishedConfig> = Object.create(null);
    for (const r of await versioned.published<{ value: string; rules: string }>(this.ctx.store, projectId, env)) {
      const config: PublishedConfig = { value: JSON.parse(r.value) as unknown, version: r.version };
      // Only a config with rules adds `rules` and `salt` (its name: GrowthBook seeds by the feature key too), so other snapshots keep their bytes.
      if (r.rules !== "[]") {
        config.rules = parseRules(r.rules);
        config.salt = r.name;
      }
      out[r.name] = config;
    }
    return out;
  }

  /** The segments an env's published config rules name (the snapshot carries each once). */
  async segmentsUsed(q: Queryable, projectId: string, env: Env): Promise<Set<string>> {
    const names = new Set<string>();
    for (const r of await versioned.published<{ rules: string }>(q, projectId, env)) {
      if (r.rules === "[]") continue;
      for (const ref of referencedSegments(asGateRules(parseRules(r.rules)))) names.add(ref.name);
    }
    return names;
  }

  /** Where a segment is used by configs: each as `config NAME (env)`, and the envs whose published rules name it. */
  async segmentUses(q: Queryable, projectId: string, segment: string): Promise<{ configs: string[]; envs: Env[] }> {
    const configs: string[] = [];
    const envs: Env[] = [];
    for (const env of ENVS) {
      const naming = await this.rulesNaming(q, projectId, env, segment);
      for (const { name } of naming) configs.push(`config ${name} (${env})`);
      if (naming.length > 0) envs.push(env);
    }
    return { configs, envs };
  }

  /**
   * Each published config of the env whose rules name a gate (passes_gate / fails_gate), its rules as gate rules: a
   * publish of a gate re-prices them, and a gate they name is not deleted.
   */
  async rulesNamingGates(q: Queryable, projectId: string, env: Env): Promise<{ name: string; rules: GateRule[] }[]> {
    const out: { name: string; rules: GateRule[] }[] = [];
    for (const r of await versioned.published<{ rules: string }>(q, projectId, env)) {
      if (r.rules === "[]") continue;
      const rules = asGateRules(parseRules(r.rules));
      if (referencedGates(rules).length > 0) out.push({ name: r.name, rules });
    }
    return out;
  }

  /** Each env's published rules of the project's configs that name `segment` (a segment edit re-prices them). */
  async rulesNaming(q: Queryable, projectId: string, env: Env, segment: string): Promise<{ name: string; rules: ConfigRule[] }[]> {
    const out: { name: string; rules: ConfigRule[] }[] = [];
    for (const r of await versioned.published<{ rules: string }>(q, projectId, env)) {
      if (r.rules === "[]") continue;
      const rules = parseRules(r.rules);
      if (referencedSegments(asGateRules(rules)).some((ref) => ref.name === segment)) out.push({ name: r.name, rules });
    }
    return out;
  }

  /**
   * What the config serves a context on an env, and why: its published rules, or its draft's with
   * `draft` (the dashboard's preview of "who gets what" before publishing).
   */
  async explain(projectId: string, idOrName: string, env: Env, context: EvaluationContext, draft = false): Promise<ConfigExplanation & { config: string; env: Env; version: number; draft: boolean }> {
    const bytes = contextBytes(context);
    if (bytes > CONTEXT_BYTES_MAX) throw validation("The evaluation context is too large", `context: ${bytes} bytes of JSON; at most ${CONTEXT_BYTES_MAX} (64 KiB)`);
    const { store } = this.ctx;
    const row = await versioned.resolve(store, projectId, idOrName);
    const live = await versioned.current<{ value: string; rules: string }>(store, row.id, env);
    let rules = parseRules(live.rules);
    let value = JSON.parse(live.value) as unknown;
    if (draft) {
      const d = await findDraft(store, row.id, env);
      if (!d) throw noDraft(row.name, env);
      value = JSON.parse(d.value) as unknown;
      if (d.rules !== null) rules = withRanges(rules, parseRules(d.rules));
    }
    const gates = await this.ctx.services.gates.publishedForEnv(projectId, env);
    const segments: Record<string, PublishedSegment> = await this.ctx.services.segments.publishedForEnv(projectId, env);
    const evaluator = createGateEvaluator({
      compileRegex,
      gate: (name) => (Object.hasOwn(gates, name) ? (gates[name] as never) : undefined),
      segment: (name) => (Object.hasOwn(segments, name) ? segments[name] : undefined),
    });
    const explained = explainConfig({ value, version: live.version, rules, salt: row.name }, context, evaluator);
    return { config: row.name, env, version: live.version, draft, ...explained, rules: explained.rules };
  }

  /**
   * The checks of rules about to be saved or published on an env beyond their shape: the segments and
   * gates they name exist, and one evaluation stays within the bound (the gates' cost model).
   */
  private async checkRuleReferences(q: Queryable, projectId: string, env: Env, name: string, rules: ConfigRule[]): Promise<void> {
    if (rules.length === 0) return;
    await this.ctx.services.gates.checkConfigRules(q, projectId, env, `Config ${name}`, asGateRules(rules));
  }

  /**
   * Creates the config and publishes its value on every env at version 1.
   * Without a value the schema's root `default` is used; the value must fit.
   */
  async create(projectId: string, input: CreateInput, actor: Actor): Promise<{ id: string; name: string }> {
    checkName(input.name);
    const description = input.description ?? "";
    checkDescription(description);
    const compiled = prepareSchema(input.schema);
    const schema = { key: null, schema: compiled.json, hash: compiled.hash };
    let value = input.value;
    if (value === undefined) {
      const fallback = rootDefault(compiled.schema);
      if (!fallback) {
        // The schema's own problems come first.
        await this.checker.check({ ...schema, values: [] });
        throw validation("value is required", "value: required unless the schema has a root default");
      }
      value = fallback.value;
    }
    const json = valueJson(value, "value");
    failIfProblems("value does not match the schema", await this.checker.check({ ...schema, values: [{ value, label: "value" }] }));

    let id: string;
    try {
      id = await this.ctx.store.write(async (tx) => {
        // Name uniqueness is a decision over the whole project.
        await versioned.lockProject(tx, projectId);
        if (await versioned.findByName(tx, projectId, input.name)) throw duplicateName(input.name);
        // A config has no inert state: its value is served on every env at once, replacing the default in the code
        // that reads it. Refused where an env requires approval (a config.create request instead).
        for (const env of ENVS) await guardPublish(tx, { projectId, env, resource: "configs", subject: input.name, actor, kind: "config.create" });
        const id = newId("cfg");
        const now = nowIso();
        await insertConfig(tx, { id, projectId, name: input.name, description, schema: compiled.json, schemaHash: compiled.hash, now });
        await versioned.publishFirst(tx, { projectId, id, content: { value: json, rules: "[]" }, actor, now });
        await this.record(tx, projectId, { id, name: input.name }, ACTIONS.create, actor, { name: input.name, version: 1 }, now);
        return id;
      });
    } catch (err) {
      // The last line of defence: UNIQUE (project_id, name).
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
    return { id, name: input.name };
  }

  async list(projectId: string, q?: string): Promise<Config[]> {
    const { store } = this.ctx;
    const rows = await versioned.ofProject(store, projectId);
    const matching = filterByQuery(rows, q, (r) => [r.name, r.description]);
    if (matching.length === 0) return [];
    const values = groupBy(await versioned.liveOfProject<ValueRow>(store, projectId));
    const drafts = groupBy(await listDraftsOfProject(store, projectId));
    // A config deleted between the reads has no values left: leave it out.
    return matching.filter((row) => values.has(row.id)).map((row) => toConfig(row, values.get(row.id)!, drafts.get(row.id) ?? []));
  }

  /** The env's published version, read through `q` (a transaction's, to read inside it): a pending change's staleness check (src/lib/changes.ts). */
  async publishedVersion(q: Queryable, projectId: string, idOrName: string, env: Env): Promise<number> {
    const row = await versioned.resolve(q, projectId, idOrName);
    return Number((await versioned.current(q, row.id, env)).version);
  }

  /** The schema's hash, read through `q`: a pending `config.schema` change's staleness check. */
  async schemaHash(q: Queryable, projectId: string, idOrName: string): Promise<string> {
    return (await versioned.resolve(q, projectId, idOrName)).schema_hash;
  }

  /** The env's published value and rules and the schema, read through `q`: a change request's "published now" (src/lib/changes.ts). */
  async publishedState(q: Queryable, projectId: string, idOrName: string, env: Env): Promise<{ value: unknown; rules: ConfigRule[]; schema: unknown }> {
    const row = await versioned.resolve(q, projectId, idOrName);
    const live = await versioned.current<ValueRow>(q, row.id, env);
    return { value: JSON.parse(live.value) as unknown, rules: publicRules(parseRules(live.rules)), schema: JSON.parse(row.schema) as unknown };
  }

  /** By id, else by name, within the project only. */
  async get(projectId: string, idOrName: string): Promise<Config> {
    const { store } = this.ctx;
    const row = await versioned.resolve(store, projectId, idOrName);
    const values = await versioned.live<ValueRow>(store, row.id);
    // Deleted since it was resolved.
    if (values.length < ENVS.length) throw versioned.tables.notFound(idOrName);
    return toConfig(row, values, await listDrafts(store, row.id));
  }

  /** What is wrong with `value` as this config's value (its schema's problems, each starting with `label`): experiments check their config overrides here. */
  async valueProblems(projectId: string, idOrName: string, value: unknown, label: string): Promise<string[]> {
    const row = await versioned.resolve(this.ctx.store, projectId, idOrName);
    return this.problems(row, [{ value, label }]);
  }

  /**
   * The PATCH rules: `value` publishes a new version on every env; a per-env
   * key publishes on that env only and wins over `value` there; `schema`
   * replaces the schema once every resulting value and every draft fits it.
   * Any failure changes nothing.
   */
  async patch(projectId: string, idOrName: string, input: PatchInput, actor: Actor): Promise<PatchResult> {
    if (input.description !== undefined) checkDescription(input.description);
    const next = new Map<Env, { value: unknown; json: string; label: string }>();
    let sharedJson: string | undefined;
    for (const env of ENVS) {
      const own = input[env];
      if (own !== undefined) next.set(env, { value: own, json: valueJson(own, env), label: env });
      else if (input.value !== undefined) {
        sharedJson ??= valueJson(input.value, "value");
        next.set(env, { value: input.value, json: sharedJson, label: "value" });
      }
    }
    if (next.size === 0 && input.schema === undefined && input.description === undefined) {
      throw validation("Nothing to update", "body: send at least one of value, dev, staging, prod, schema, description");
    }
    const newSchema = input.schema === undefined ? null : prepareSchema(input.schema);

    const result = await this.validatedWrite(
      projectId,
      idOrName,
      async (row) => {
        const values: SchemaCheck["values"] = [];
        const checked = new Set<string>();
        for (const { value, label } of next.values()) {
          // `value` fans out to several envs: report its failures once.
          if (checked.has(label)) continue;
          checked.add(label);
          values.push({ value, label });
        }
        if (newSchema) {
          const { store } = this.ctx;
          for (const stored of byEnvName(await versioned.live<ValueRow>(store, row.id))) {
            if (!next.has(stored.env)) values.push({ value: JSON.parse(stored.value), label: stored.env });
            // Every value a rule can serve must fit the new schema too (issue 29).
            values.push(...ruleValues(parseRules(stored.rules), `${stored.env} rules`));
          }
          for (const draft of await listDrafts(store, row.id)) {
            values.push({ value: JSON.parse(draft.value), label: `draft ${draft.env}` });
            if (draft.rules !== null) values.push(...ruleValues(parseRules(draft.rules), `draft ${draft.env} rules`));
          }
          // Checked (and compiled) even with no value to check: a schema that cannot be used is refused.
          const problems = await this.checker.check({ key: null, schema: newSchema.json, hash: newSchema.hash, values });
          failIfProblems("A value or draft does not match the new schema", problems);
        } else if (values.length > 0) {
          failIfProblems("value does not match the schema", await this.problems(row, values));
        }
      },
      async (tx, row) => {
        const now = nowIso();
        const schemaChanged = newSchema !== null && newSchema.hash !== row.schema_hash;
        if (schemaChanged) {
          // The schema holds on every env: any env requiring approval makes a schema change go through a request.
          await guardPublish(tx, { projectId, env: null, resource: "configs", subject: row.id, actor });
          await setConfigSchema(tx, row.id, newSchema.json, newSchema.hash);
        }
        if (input.description !== undefined) await setConfigDescription(tx, row.id, input.description);
        await touchConfig(tx, row.id, now);
        const versions: Partial<Record<Env, number>> = {};
        for (const [env, { json }] of next) {
          // A new default value keeps the env's rules.
          const { rules } = await versioned.current<{ rules: string }>(tx, row.id, env);
          versions[env] = await versioned.publish(tx, { projectId, id: row.id, env, content: { value: json, rules }, actor, now });
        }
        const payload: Record<string, unknown> = { versions };
        if (schemaChanged) payload.schemaChanged = true;
        if (input.description !== undefined) payload.descriptionChanged = true;
        await this.record(tx, projectId, row, ACTIONS.update, actor, payload, now);
        // New published versions: what connectors hear (the outbox, in this transaction; payload in connectors/events.ts).
        if (next.size > 0) await emitEvent(tx, { projectId, type: "config.published", payload: { configId: row.id, name: row.name, action: ACTIONS.update, versions, actor: actor.email } });
        return { id: row.id, versions, schemaChanged };
      },
    );
    return result;
  }

  /** Deletes the config with its values, versions and drafts; its activity stays readable by id. */
  /**
   * For a body that names a config (an experiment's override, a rollout's
   * subject), in the caller's transaction: takes the config's lock, the one
   * its delete takes, and answers it; undefined when the project has no
   * config by that id or name.
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

  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    const id = await this.ctx.store.write(async (tx) => {
      const row = await versioned.lock(tx, projectId, idOrName);
      await this.ctx.services.experiments.refuseIfUsed(tx, projectId, "config", row.name);
      await this.ctx.services.rollouts.refuseIfRolling(tx, projectId, "config", row.name);
      await versioned.remove(tx, projectId, row.id);
      await this.record(tx, projectId, row, ACTIONS.delete, actor, { name: row.name }, nowIso());
      return row.id;
    });
    this.checker.forget(id);
  }

  /**
   * Stores (or overwrites) the env's draft, forked from the env's current version. Publishes nothing.
   * With `rules`, the draft holds the env's next rules too (every value they serve checked against the
   * schema, the segments and gates they name checked to exist); without, publishing keeps the env's rules.
   */
  async saveDraft(
    projectId: string,
    idOrName: string,
    env: Env,
    value: unknown,
    actor: Actor,
    rawRules?: unknown,
  ): Promise<{ id: string; env: Env; baseVersion: number; updatedAt: string }> {
    const json = valueJson(value, "value");
    const rules = rawRules === undefined ? null : checkConfigRules(rawRules);
    const rulesJson = rules === null ? null : rulesText(rules);
    return this.validatedWrite(
      projectId,
      idOrName,
      async (row) => {
        failIfProblems("value does not match the schema", await this.problems(row, [{ value, label: "value" }, ...ruleValues(rules ?? [])]));
        await this.checkRuleReferences(this.ctx.store, projectId, env, row.name, rules ?? []);
      },
      async (tx, row) => {
        const baseVersion = (await versioned.current(tx, row.id, env)).version;
        const now = nowIso();
        await upsertDraft(tx, { configId: row.id, env, value: json, rules: rulesJson, baseVersion, actorEmail: actor.email, updatedAt: now });
        await bumpChangeSeq(tx, row.id);
        const payload: Record<string, unknown> = { env, baseVersion };
        if (rules !== null) payload.rules = rules.length;
        await this.record(tx, projectId, row, ACTIONS.draftSave, actor, payload, now);
        return { id: row.id, env, baseVersion, updatedAt: now };
      },
    );
  }

  /**
   * A config's next rules on an env as a rollout of them serves and finally publishes them (issue 29):
   * checked as a draft's (shape, every value against the schema, segments and gates named, the bound),
   * each split given buckets that continue the published ones (rules.ts withRanges).
   */
  async rulesToPublish(projectId: string, idOrName: string, env: Env, raw: unknown): Promise<ConfigRule[]> {
    const rules = checkConfigRules(raw);
    const { store } = this.ctx;
    const row = await versioned.resolve(store, projectId, idOrName);
    failIfProblems("A rule's value does not match the config's schema", await this.problems(row, ruleValues(rules)));
    await this.checkRuleReferences(store, projectId, env, row.name, rules);
    const live = await versioned.current<{ rules: string }>(store, row.id, env);
    return withRanges(parseRules(live.rules), rules);
  }

  /**
   * Publishes a value and rules (their buckets already given, from rulesToPublish) as the env's next
   * version: what a completed rollout of a config's rules leaves published. The env's draft stays.
   */
  async publishState(projectId: string, idOrName: string, env: Env, value: unknown, rules: ConfigRule[], actor: Actor): Promise<{ id: string; env: Env; version: number }> {
    const json = valueJson(value, "value");
    return this.validatedWrite(
      projectId,
      idOrName,
      async (row) => failIfProblems("value does not match the schema", await this.problems(row, [{ value, label: "value" }, ...ruleValues(rules)])),
      async (tx, row) => {
        const now = nowIso();
        await this.checkPublishedReferences(tx, projectId, env, row.name, rules);
        const version = await versioned.publish(tx, { projectId, id: row.id, env, content: { value: json, rules: rulesText(rules) }, actor, now });
        await touchConfig(tx, row.id, now);
        await this.record(tx, projectId, row, ACTIONS.publish, actor, { env, version, rules: rules.length }, now);
        await emitEvent(tx, { projectId, type: "config.published", payload: { configId: row.id, name: row.name, action: ACTIONS.publish, versions: { [env]: version }, actor: actor.email } });
        return { id: row.id, env, version };
      },
    );
  }

  /**
   * Checks a value against the config's current schema and the value limits,
   * storing nothing: the dashboard's editor asks as you type, so that the
   * browser never runs a second validator that could disagree with this one.
   */
  async checkValue(projectId: string, idOrName: string, value: unknown): Promise<{ valid: boolean; problems: string[] }> {
    const row = await versioned.resolve(this.ctx.store, projectId, idOrName);
    try {
      valueJson(value, "value");
    } catch (err) {
      const e = err as { message: string; detail?: string };
      return { valid: false, problems: [e.detail ?? e.message] };
    }
    // A schema that cannot be used, or a check over its time budget, is VALIDATION (not a 200): nothing was checked.
    const problems = await this.problems(row, [{ value, label: "value" }]);
    return { valid: problems.length === 0, problems };
  }

  async listDrafts(projectId: string, idOrName: string): Promise<Draft[]> {
    const { store } = this.ctx;
    const row = await versioned.resolve(store, projectId, idOrName);
    return sortByEnv(await listDrafts(store, row.id)).map(toDraft);
  }

  async getDraft(projectId: string, idOrName: string, env: Env): Promise<Draft> {
    const { store } = this.ctx;
    const row = await versioned.resolve(store, projectId, idOrName);
    const draft = await findDraft(store, row.id, env);
    if (!draft) throw noDraft(row.name, env);
    return toDraft(draft);
  }

  /** Discards the env's draft (NOT_FOUND when there is none). */
  async deleteDraft(projectId: string, idOrName: string, env: Env, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      const row = await versioned.lock(tx, projectId, idOrName);
      const changes = await deleteDraft(tx, row.id, env);
      if (changes === 0) throw noDraft(row.name, env);
      await bumpChangeSeq(tx, row.id);
      // No activity row (the log keeps its five actions), but the audit has it.
      await recordAudit(tx, { projectId, action: AUDIT_ONLY_ACTIONS.draftDelete, subjectId: row.id, subjectName: row.name, env, actor });
    });
  }

  /**
   * Promotes the env's draft to a new published version and removes it. The
   * draft is checked against the schema before the transaction; the commit
   * only checks that neither moved since.
   */
  async publishDraft(projectId: string, idOrName: string, env: Env, actor: Actor): Promise<{ id: string; env: Env; version: number; value: unknown }> {
    let draftValue: unknown;
    return this.validatedWrite(
      projectId,
      idOrName,
      async (row) => {
        const draft = await findDraft(this.ctx.store, row.id, env);
        if (!draft) throw noDraft(row.name, env);
        draftValue = JSON.parse(draft.value) as unknown;
        const rules = draft.rules === null ? [] : parseRules(draft.rules);
        failIfProblems("The draft no longer matches the config's schema; save a new draft", await this.problems(row, [{ value: draftValue, label: `draft ${env}` }, ...ruleValues(rules, `draft ${env} rules`)]));
      },
      async (tx, row) => {
        const draft = await findDraft(tx, row.id, env);
        if (!draft) throw noDraft(row.name, env);
        const now = nowIso();
        const live = await versioned.current<{ rules: string }>(tx, row.id, env);
        const before = parseRules(live.rules);
        // The rules go out with the value; a split keeps the buckets its values had (rules.ts withRanges).
        const next = draft.rules === null ? before : withRanges(before, parseRules(draft.rules));
        if (draft.rules !== null) await this.checkPublishedReferences(tx, projectId, env, row.name, next);
        const version = await versioned.publish(tx, { projectId, id: row.id, env, content: { value: draft.value, rules: rulesText(next) }, actor, now });
        await deleteDraft(tx, row.id, env);
        await touchConfig(tx, row.id, now);
        const payload: Record<string, unknown> = { env, version };
        if (draft.rules !== null) payload.rules = { before: before.length, after: next.length };
        await this.record(tx, projectId, row, ACTIONS.publish, actor, payload, now);
        await emitEvent(tx, { projectId, type: "config.published", payload: { configId: row.id, name: row.name, action: ACTIONS.publish, versions: { [env]: version }, actor: actor.email } });
        return { id: row.id, env, version, value: draftValue };
      },
    );
  }

  /**
   * Publishes the value of `version` of one env again, as that env's next
   * version (as gates and killswitches roll back). The value is checked
   * against the current schema first (the schema may have changed since):
   * one that no longer fits is VALIDATION and nothing is published. The
   * activity log records it as a publish (its five actions) with
   * `rollbackOf`; the audit as `config.rollback`.
   */
  async rollback(projectId: string, idOrName: string, input: { env: Env; version: number }, actor: Actor): Promise<{ id: string; env: Env; version: number; value: unknown }> {
    const { env, version: target } = input;
    let json = "";
    let rulesJson = "[]";
    let value: unknown;
    return this.validatedWrite(
      projectId,
      idOrName,
      async (row) => {
        // Published versions never change: what is read here is what the commit publishes.
        const found = await versioned.version<{ value: string; rules: string }>(this.ctx.store, row.id, env, target);
        if (!found) throw notFound(`Config ${row.name} has no version ${target} on ${env}`, `version: 1 to the current version of ${env} (GET /api/admin/configs/{id}/history?env=${env} lists them)`);
        json = found.value;
        rulesJson = found.rules;
        value = JSON.parse(json) as unknown;
        failIfProblems(`The value of version ${target} does not match the config's current schema`, await this.problems(row, [{ value, label: `version ${target}` }, ...ruleValues(parseRules(rulesJson), `version ${target} rules`)]));
      },
      async (tx, row) => {
        const now = nowIso();
        // Rules and their buckets come back as they were, so every unit gets what it got then; the segments they name must still exist.
        await this.checkPublishedReferences(tx, projectId, env, row.name, parseRules(rulesJson));
        const version = await versioned.publish(tx, { projectId, id: row.id, env, content: { value: json, rules: rulesJson }, actor, now });
        await touchConfig(tx, row.id, now);
        await insertActivity(tx, { id: newId("act"), projectId, configId: row.id, action: ACTIONS.publish, actorEmail: actor.email, actorType: actor.type, payload: { env, version, rollbackOf: target }, createdAt: now });
        await recordAudit(tx, { projectId, action: AUDIT_ONLY_ACTIONS.rollback, subjectId: row.id, subjectName: row.name, env, actor, detail: { env, version, from: target } });
        await emitEvent(tx, { projectId, type: "config.published", payload: { configId: row.id, name: row.name, action: AUDIT_ONLY_ACTIONS.rollback, versions: { [env]: version }, actor: actor.email } });
        return { id: row.id, env, version, value };
      },
    );
  }

  /**
   * Activity rows, newest first. A deleted config is still found by its id,
   * so its history, delete row included, stays readable.
   */
  async activity(projectId: string, idOrName: string, limit = ACTIVITY_DEFAULT_LIMIT): Promise<(ActivityRow & { actorName: string | null })[]> {
    checkLimit(limit, ACTIVITY_MAX_LIMIT);
    const { store } = this.ctx;
    const live = await versioned.find(store, projectId, idOrName);
    const rows = await listActivity(store, projectId, live?.id ?? idOrName, limit);
    if (!live && rows.length === 0) throw notFound(`No config ${idOrName} in this project`);
    // A key or token that acted is shown by its name, as in the audit trail (issue 27, item 15).
    return await this.ctx.services.audit.withActorNames(projectId, rows);
  }

  /** Published versions, newest first; every env when `env` is absent. */
  async history(projectId: string, idOrName: string, options: { env?: Env; limit?: number } = {}): Promise<HistoryEntry[]> {
    const rows = await versioned.history<VersionRow>(this.ctx.store, projectId, idOrName, options);
    return rows.map((r) => ({
      env: r.env,
      version: r.version,
      value: JSON.parse(r.value) as unknown,
      rules: publicRules(parseRules(r.rules)),
      actorEmail: r.actor_email,
      actorType: r.actor_type,
      createdAt: r.created_at,
    }));
  }

  /**
   * An optimistic write: `check` validates against the config as read now
   * (committed data), outside the write lock (it may throw to refuse);
   * `commit` runs in the write transaction, under the config's lock, only if
   * the config's change_seq is still the one checked, else the config is read
   * and checked again. The first try runs at once; a writer that lost it
   * tries again in turn with this process's other losers of the same config,
   * so that they do not keep making each other's validation stale (only
   * another process's writes can then). A call inside another transaction
   * never loses its first try, so it never waits for a turn.
   */
  private async validatedWrite<T>(
    projectId: string,
    idOrName: string,
    check: (row: ConfigRow) => void | Promise<void>,
    commit: (tx: Tx, row: ConfigRow) => Promise<T>,
  ): Promise<T> {
    const { store } = this.ctx;
    const attempt = async (): Promise<{ seen: ConfigRow; outcome: T | typeof STALE }> => {
      const seen = await versioned.resolve(store, projectId, idOrName);
      await check(seen);
      const outcome = await store.write(async (tx): Promise<T | typeof STALE> => {
        const row = await versioned.lock(tx, projectId, idOrName);
        if (row.id !== seen.id || Number(row.change_seq) !== Number(seen.change_seq)) return STALE;
        return commit(tx, row);
      });
      return { seen, outcome };
    };
    const first = await attempt();
    if (first.outcome !== STALE) return first.outcome;
    return this.inTurn(`${projectId}:${first.seen.id}`, async () => {
      const deadline = performance.now() + WRITE_BUDGET_MS;
      for (let tries = 1; tries < WRITE_ATTEMPTS || performance.now() < deadline; tries++) {
        // Lost again inside our turn: another process writes this config too; step aside a little.
        if (tries > 1) await Bun.sleep(Math.random() * Math.min(2 ** tries, 20));
        const { outcome } = await attempt();
        if (outcome !== STALE) return outcome;
      }
      // Others keep changing this config faster than it can be validated: let the caller retry.
      throw unavailable(1);
    });
  }

  /** Runs `fn` after every earlier call with the same key has settled. */
  private async inTurn<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(key) ?? Promise.resolve();
    const run = previous.then(fn);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.turns.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.turns.get(key) === settled) this.turns.delete(key);
    }
  }

  /** For a rollout of a config's rules, inside its transaction: the checks a publish of them makes (segments locked and present). */
  checkRulesInTransaction(tx: Tx, projectId: string, env: Env, name: string, rules: ConfigRule[]): Promise<void> {
    return this.checkPublishedReferences(tx, projectId, env, name, rules);
  }

  /**
   * checkRuleReferences inside a publishing transaction, under the segments' lock of the project (what a
   * segment's delete takes), so no segment the rules name goes away before the publish commits.
   */
  private async checkPublishedReferences(tx: Tx, projectId: string, env: Env, name: string, rules: ConfigRule[]): Promise<void> {
    if (rules.length === 0) return;
    await this.ctx.services.segments.lockForReference(tx, projectId);
    await this.checkRuleReferences(tx, projectId, env, name, rules);
  }

  /** The problems of values against the config's stored schema, checked in the schema checker process. */
  private problems(row: ConfigRow, values: SchemaCheck["values"]): Promise<string[]> {
    return this.checker.check({ key: row.id, schema: row.schema, hash: row.schema_hash, values });
  }

  /** Ends the schema checker process (server stop). */
  close(): void {
    this.checker.close();
  }

  /** The change's activity row and its audit row (same action and facts), in the change's transaction. */
  private async record(
    tx: Tx,
    projectId: string,
    config: { id: string; name: string },
    action: string,
    actor: Actor,
    payload: Record<string, unknown>,
    now: string,
  ): Promise<void> {
    await insertActivity(tx, { id: newId("act"), projectId, configId: config.id, action, actorEmail: actor.email, actorType: actor.type, payload, createdAt: now });
    const env = typeof payload.env === "string" ? payload.env : null;
    await recordAudit(tx, { projectId, action, subjectId: config.id, subjectName: config.name, env, actor, detail: payload });
  }
}

/** Stored rules: `[]` when none, so that `publishedForEnv` tells a rule-less config by its text alone. */
function rulesText(rules: ConfigRule[]): string {
  return rules.length === 0 ? "[]" : JSON.stringify(rules);
}

function noDraft(name: string, env: Env) {
  return notFound(
    `Config ${name} has no draft on ${env}`,
    `env: save one first with PUT /api/admin/configs/{id}/drafts {"env": "${env}", "value": ...}`,
  );
}
