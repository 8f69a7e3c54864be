import { type Db, writeTransaction } from "../../lib/db";
import { alreadyExists, notFound, unavailable, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import { checkLimit, checkResourceName } from "../../lib/validate";
import type { RevisionsService } from "../delivery/revisions";
import { ENVS, type Env } from "../projects/service";
import { type CompiledSchema, ConfigSchemas, checkValueBounds } from "./json-schema";

export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;
/** Largest config value accepted, as JSON text. */
export const VALUE_MAX_BYTES = 256 * 1024;
export const ACTIVITY_DEFAULT_LIMIT = 20;
export const ACTIVITY_MAX_LIMIT = 100;
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

/** Who made a change, as recorded on activity rows and published versions. */
export type Actor = { email: string; type: string };

export type EnvValue = { value: unknown; version: number; updatedAt: string };
export type DraftValue = { value: unknown; baseVersion: number; updatedAt: string };
export type Draft = DraftValue & { id: string; env: Env };

export type Config = {
  id: string;
  name: string;
  description: string;
  schema: unknown;
  envs: Record<Env, EnvValue>;
  drafts: Partial<Record<Env, DraftValue>>;
  createdAt: string;
  updatedAt: string;
};

export type CreateInput = { name: string; schema: unknown; value?: unknown; description?: string };

/** PATCH fields; a key that is `undefined` was not sent (JSON has no undefined, so `null` is a value). */
export type PatchInput = {
  value?: unknown;
  dev?: unknown;
  staging?: unknown;
  prod?: unknown;
  schema?: unknown;
  description?: string;
};

export type PatchResult = { id: string; versions: Partial<Record<Env, number>>; schemaChanged: boolean };

export type ActivityRow = {
  id: string;
  action: string;
  actorEmail: string;
  actorType: string;
  payload: Record<string, unknown>;
  createdAt: string;
};

export type HistoryEntry = { env: Env; version: number; value: unknown; actorEmail: string; actorType: string; createdAt: string };

export const ACTIONS = {
  create: "config.create",
  update: "config.update",
  draftSave: "config.draft.save",
  publish: "config.publish",
  delete: "config.delete",
} as const;

type ConfigRow = {
  id: string;
  name: string;
  description: string;
  schema: string;
  schema_hash: string;
  change_seq: number;
  created_at: string;
  updated_at: string;
};
type ValueRow = { config_id: string; env: Env; value: string; version: number; updated_at: string };
type DraftRow = { config_id: string; env: Env; value: string; base_version: number; updated_at: string };

const CONFIG_COLUMNS = "id, name, description, schema, schema_hash, change_seq, created_at, updated_at";

/** Tries of an optimistic write whose config changed between validation and commit, before 503. */
const WRITE_ATTEMPTS = 5;
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

/**
 * Dynamic configs: JSON values per env, validated against the config's JSON
 * Schema, with drafts, publish, history and an activity log. Every change is
 * one write transaction that also writes its activity row and bumps the
 * revision of each env whose published value moved.
 *
 * Validation can cost real CPU, so it never runs while the write lock is
 * held: a change reads the config, validates, then commits only if the
 * config's `change_seq` has not moved meanwhile (else it validates again).
 */
export class ConfigsService {
  private readonly schemas = new ConfigSchemas();
  private readonly byId;
  private readonly byName;
  private readonly valuesOf;
  private readonly draftsOf;
  private readonly draftOf;
  private readonly updateValue;
  private readonly insertVersion;
  private readonly insertActivity;
  private readonly touch;
  private readonly bumpChange;
  private readonly published;

  constructor(
    private readonly db: Db,
    private readonly revisions: RevisionsService,
  ) {
    this.byId = db.prepare<ConfigRow, [string, string]>(`SELECT ${CONFIG_COLUMNS} FROM configs WHERE id = ? AND project_id = ?`);
    this.byName = db.prepare<ConfigRow, [string, string]>(`SELECT ${CONFIG_COLUMNS} FROM configs WHERE name = ? AND project_id = ?`);
    this.valuesOf = db.prepare<ValueRow, [string]>(
      "SELECT config_id, env, value, version, updated_at FROM config_values WHERE config_id = ?",
    );
    this.draftsOf = db.prepare<DraftRow, [string]>(
      "SELECT config_id, env, value, base_version, updated_at FROM config_drafts WHERE config_id = ?",
    );
    this.draftOf = db.prepare<DraftRow, [string, string]>(
      "SELECT config_id, env, value, base_version, updated_at FROM config_drafts WHERE config_id = ? AND env = ?",
    );
    this.updateValue = db.prepare<{ version: number }, [string, string, string, string]>(
      "UPDATE config_values SET value = ?, version = version + 1, updated_at = ? WHERE config_id = ? AND env = ? RETURNING version",
    );
    this.insertVersion = db.prepare<never, [string, string, number, string, string, string, string]>(
      `INSERT INTO config_versions (config_id, env, version, value, actor_email, actor_type, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertActivity = db.prepare<never, [string, string, string, string, string, string, string, string]>(
      `INSERT INTO config_activity (id, project_id, config_id, action, actor_email, actor_type, payload, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.bumpChange = db.prepare<never, [string]>("UPDATE configs SET change_seq = change_seq + 1 WHERE id = ?");
    this.touch = db.prepare<never, [string, string]>("UPDATE configs SET updated_at = ?, change_seq = change_seq + 1 WHERE id = ?");
    this.published = db.prepare<{ name: string; value: string; version: number }, [string, string]>(
      `SELECT c.name, v.value, v.version
       FROM configs c JOIN config_values v ON v.config_id = c.id
       WHERE c.project_id = ? AND v.env = ?`,
    );
  }

  /**
   * Everything published on one env, by config name: the snapshot builder's
   * one query. The map has no prototype, so a lookup by a key from a request
   * (`constructor`, `__proto__`) finds only real configs.
   */
  publishedForEnv(projectId: string, env: Env): Record<string, { value: unknown; version: number }> {
    const out: Record<string, { value: unknown; version: number }> = Object.create(null);
    for (const r of this.published.all(projectId, env)) out[r.name] = { value: JSON.parse(r.value) as unknown, version: r.version };
    return out;
  }

  /**
   * Creates the config and publishes its value on every env at version 1.
   * Without a value the schema's root `default` is used; the value must fit.
   */
  async create(projectId: string, input: CreateInput, actor: Actor): Promise<{ id: string; name: string }> {
    checkName(input.name);
    const description = input.description ?? "";
    checkDescription(description);
    const compiled = this.schemas.compile(input.schema);
    let value = input.value;
    if (value === undefined) {
      const fallback = this.schemas.rootDefault(compiled);
      if (!fallback) throw validation("value is required", "value: required unless the schema has a root default");
      value = fallback.value;
    }
    const json = valueJson(value, "value");
    failIfProblems("value does not match the schema", this.schemas.problems(compiled, value, "value"));

    const id = await writeTransaction(this.db, () => {
      if (this.byName.get(input.name, projectId)) {
        throw alreadyExists(`A config named ${input.name} already exists in this project`, "name: choose another name");
      }
      const id = newId("cfg");
      const now = nowIso();
      this.db
        .query(
          `INSERT INTO configs (id, project_id, name, description, schema, schema_hash, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, projectId, input.name, description, compiled.json, compiled.hash, now, now);
      const insertValue = this.db.query("INSERT INTO config_values (config_id, env, value, version, updated_at) VALUES (?, ?, ?, 1, ?)");
      for (const env of ENVS) {
        insertValue.run(id, env, json, now);
        this.insertVersion.run(id, env, 1, json, actor.email, actor.type, now);
        this.revisions.bump(projectId, env);
      }
      this.record(projectId, id, ACTIONS.create, actor, { name: input.name, version: 1 }, now);
      return id;
    });
    this.schemas.remember(id, compiled);
    return { id, name: input.name };
  }

  list(projectId: string, q?: string): Config[] {
    const rows = this.db
      .query<ConfigRow, [string]>(`SELECT ${CONFIG_COLUMNS} FROM configs WHERE project_id = ? ORDER BY name, id`)
      .all(projectId);
    const matching = filterByQuery(rows, q, (r) => [r.name, r.description]);
    if (matching.length === 0) return [];
    const values = this.db
      .query<ValueRow, [string]>(
        "SELECT v.config_id, v.env, v.value, v.version, v.updated_at FROM config_values v JOIN configs c ON c.id = v.config_id WHERE c.project_id = ?",
      )
      .all(projectId);
    const drafts = this.db
      .query<DraftRow, [string]>(
        "SELECT d.config_id, d.env, d.value, d.base_version, d.updated_at FROM config_drafts d JOIN configs c ON c.id = d.config_id WHERE c.project_id = ?",
      )
      .all(projectId);
    return matching.map((row) =>
      toConfig(
        row,
        values.filter((v) => v.config_id === row.id),
        drafts.filter((d) => d.config_id === row.id),
      ),
    );
  }

  /** By id, else by name, within the project only. */
  get(projectId: string, idOrName: string): Config {
    const row = this.resolve(projectId, idOrName);
    return toConfig(row, this.valuesOf.all(row.id), this.draftsOf.all(row.id));
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
    const newSchema = input.schema === undefined ? null : this.schemas.compile(input.schema);

    const result = await this.validatedWrite(
      projectId,
      idOrName,
      (row) => {
        const schema = newSchema ?? this.schemaOf(row);
        const problems: string[] = [];
        const checked = new Set<string>();
        for (const { value, label } of next.values()) {
          // `value` fans out to several envs: report its failures once.
          if (checked.has(label)) continue;
          checked.add(label);
          problems.push(...this.schemas.problems(schema, value, label));
        }
        if (newSchema) {
          for (const stored of this.valuesOf.all(row.id)) {
            if (!next.has(stored.env)) problems.push(...this.schemas.problems(newSchema, JSON.parse(stored.value), stored.env));
          }
          for (const draft of this.draftsOf.all(row.id)) {
            problems.push(...this.schemas.problems(newSchema, JSON.parse(draft.value), `draft ${draft.env}`));
          }
        }
        failIfProblems(newSchema ? "A value or draft does not match the new schema" : "value does not match the schema", problems);
      },
      (row) => {
        const now = nowIso();
        const schemaChanged = newSchema !== null && newSchema.hash !== row.schema_hash;
        if (schemaChanged) {
          this.db.query("UPDATE configs SET schema = ?, schema_hash = ? WHERE id = ?").run(newSchema.json, newSchema.hash, row.id);
        }
        if (input.description !== undefined) this.db.query("UPDATE configs SET description = ? WHERE id = ?").run(input.description, row.id);
        this.touch.run(now, row.id);
        const versions: Partial<Record<Env, number>> = {};
        for (const [env, { json }] of next) versions[env] = this.publish(projectId, row.id, env, json, actor, now);
        const payload: Record<string, unknown> = { versions };
        if (schemaChanged) payload.schemaChanged = true;
        if (input.description !== undefined) payload.descriptionChanged = true;
        this.record(projectId, row.id, ACTIONS.update, actor, payload, now);
        return { id: row.id, versions, schemaChanged };
      },
    );
    if (result.schemaChanged) this.schemas.remember(result.id, newSchema!);
    return result;
  }

  /** Deletes the config with its values, versions and drafts; its activity stays readable by id. */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    const id = await writeTransaction(this.db, () => {
      const row = this.resolve(projectId, idOrName);
      this.db.query("DELETE FROM configs WHERE id = ?").run(row.id);
      for (const env of ENVS) this.revisions.bump(projectId, env);
      this.record(projectId, row.id, ACTIONS.delete, actor, { name: row.name }, nowIso());
      return row.id;
    });
    this.schemas.forget(id);
  }

  /** Stores (or overwrites) the env's draft, forked from the env's current version. Publishes nothing. */
  async saveDraft(
    projectId: string,
    idOrName: string,
    env: Env,
    value: unknown,
    actor: Actor,
  ): Promise<{ id: string; env: Env; baseVersion: number; updatedAt: string }> {
    const json = valueJson(value, "value");
    return this.validatedWrite(
      projectId,
      idOrName,
      (row) => failIfProblems("value does not match the schema", this.schemas.problems(this.schemaOf(row), value, "value")),
      (row) => {
        const baseVersion = this.currentVersion(row.id, env);
        const now = nowIso();
        this.db
          .query(
            `INSERT INTO config_drafts (config_id, env, value, base_version, actor_email, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (config_id, env) DO UPDATE SET value = ?3, base_version = ?4, actor_email = ?5, updated_at = ?6`,
          )
          .run(row.id, env, json, baseVersion, actor.email, now);
        this.bumpChange.run(row.id);
        this.record(projectId, row.id, ACTIONS.draftSave, actor, { env, baseVersion }, now);
        return { id: row.id, env, baseVersion, updatedAt: now };
      },
    );
  }

  listDrafts(projectId: string, idOrName: string): Draft[] {
    const row = this.resolve(projectId, idOrName);
    const drafts = this.draftsOf.all(row.id);
    return ENVS.flatMap((env) => drafts.filter((d) => d.env === env).map(toDraft));
  }

  getDraft(projectId: string, idOrName: string, env: Env): Draft {
    const row = this.resolve(projectId, idOrName);
    const draft = this.draftOf.get(row.id, env);
    if (!draft) throw noDraft(row.name, env);
    return toDraft(draft);
  }

  async deleteDraft(projectId: string, idOrName: string, env: Env): Promise<void> {
    await writeTransaction(this.db, () => {
      const row = this.resolve(projectId, idOrName);
      const changes = this.db.query("DELETE FROM config_drafts WHERE config_id = ? AND env = ?").run(row.id, env).changes;
      if (changes === 0) throw noDraft(row.name, env);
      this.bumpChange.run(row.id);
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
      (row) => {
        const draft = this.draftOf.get(row.id, env);
        if (!draft) throw noDraft(row.name, env);
        draftValue = JSON.parse(draft.value) as unknown;
        failIfProblems(
          "The draft no longer matches the config's schema; save a new draft",
          this.schemas.problems(this.schemaOf(row), draftValue, `draft ${env}`),
        );
      },
      (row) => {
        const draft = this.draftOf.get(row.id, env);
        if (!draft) throw noDraft(row.name, env);
        const now = nowIso();
        const version = this.publish(projectId, row.id, env, draft.value, actor, now);
        this.db.query("DELETE FROM config_drafts WHERE config_id = ? AND env = ?").run(row.id, env);
        this.touch.run(now, row.id);
        this.record(projectId, row.id, ACTIONS.publish, actor, { env, version }, now);
        return { id: row.id, env, version, value: draftValue };
      },
    );
  }

  /**
   * Activity rows, newest first. A deleted config is still found by its id,
   * so its history, delete row included, stays readable.
   */
  activity(projectId: string, idOrName: string, limit = ACTIVITY_DEFAULT_LIMIT): ActivityRow[] {
    checkLimit(limit, ACTIVITY_MAX_LIMIT);
    const live = this.byId.get(idOrName, projectId) ?? this.byName.get(idOrName, projectId);
    const rows = this.db
      .query<
        { id: string; action: string; actor_email: string; actor_type: string; payload: string; created_at: string },
        [string, string, number]
      >(
        `SELECT id, action, actor_email, actor_type, payload, created_at FROM config_activity
         WHERE project_id = ? AND config_id = ? ORDER BY seq DESC LIMIT ?`,
      )
      .all(projectId, live?.id ?? idOrName, limit);
    if (!live && rows.length === 0) throw notFound(`No config ${idOrName} in this project`);
    return rows.map((r) => ({
      id: r.id,
      action: r.action,
      actorEmail: r.actor_email,
      actorType: r.actor_type,
      payload: JSON.parse(r.payload) as Record<string, unknown>,
      createdAt: r.created_at,
    }));
  }

  /** Published versions, newest first; every env when `env` is absent. */
  history(projectId: string, idOrName: string, options: { env?: Env; limit?: number } = {}): HistoryEntry[] {
    const row = this.resolve(projectId, idOrName);
    const limit = options.limit ?? HISTORY_DEFAULT_LIMIT;
    checkLimit(limit, HISTORY_MAX_LIMIT);
    type VersionRow = { env: Env; version: number; value: string; actor_email: string; actor_type: string; created_at: string };
    const columns = "env, version, value, actor_email, actor_type, created_at";
    const rows = options.env
      ? this.db
          .query<VersionRow, [string, string, number]>(
            `SELECT ${columns} FROM config_versions WHERE config_id = ? AND env = ? ORDER BY seq DESC LIMIT ?`,
          )
          .all(row.id, options.env, limit)
      : this.db
          .query<VersionRow, [string, number]>(`SELECT ${columns} FROM config_versions WHERE config_id = ? ORDER BY seq DESC LIMIT ?`)
          .all(row.id, limit);
    return rows.map((r) => ({
      env: r.env,
      version: r.version,
      value: JSON.parse(r.value) as unknown,
      actorEmail: r.actor_email,
      actorType: r.actor_type,
      createdAt: r.created_at,
    }));
  }

  /**
   * An optimistic write: `check` validates against the config as read now,
   * outside the write lock (it may throw to refuse); `commit` runs in the
   * write transaction only if the config's change_seq is still the one
   * checked, else the config is read and checked again.
   */
  private async validatedWrite<T>(projectId: string, idOrName: string, check: (row: ConfigRow) => void, commit: (row: ConfigRow) => T): Promise<T> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const seen = this.resolve(projectId, idOrName);
      check(seen);
      const outcome = await writeTransaction(this.db, (): T | typeof STALE => {
        const row = this.resolve(projectId, idOrName);
        if (row.id !== seen.id || row.change_seq !== seen.change_seq) return STALE;
        return commit(row);
      });
      if (outcome !== STALE) return outcome;
    }
    // Others keep changing this config faster than it can be validated: let the caller retry.
    throw unavailable(1);
  }

  private resolve(projectId: string, idOrName: string): ConfigRow {
    const row = this.byId.get(idOrName, projectId) ?? this.byName.get(idOrName, projectId);
    if (!row) throw notFound(`No config ${idOrName} in this project`);
    return row;
  }

  private schemaOf(row: ConfigRow): CompiledSchema {
    return this.schemas.forConfig(row.id, row.schema, row.schema_hash);
  }

  private currentVersion(configId: string, env: Env): number {
    return this.valuesOf.all(configId).find((v) => v.env === env)?.version ?? 0;
  }

  /** One new published version on one env: live value, history row, revision bump. Inside a transaction. */
  private publish(projectId: string, configId: string, env: Env, json: string, actor: Actor, now: string): number {
    const version = this.updateValue.get(json, now, configId, env)!.version;
    this.insertVersion.run(configId, env, version, json, actor.email, actor.type, now);
    this.revisions.bump(projectId, env);
    return version;
  }

  private record(projectId: string, configId: string, action: string, actor: Actor, payload: Record<string, unknown>, now: string): void {
    this.insertActivity.run(newId("act"), projectId, configId, action, actor.email, actor.type, JSON.stringify(payload), now);
  }
}

function noDraft(name: string, env: Env) {
  return notFound(
    `Config ${name} has no draft on ${env}`,
    `env: save one first with PUT /api/admin/configs/{id}/drafts {"env": "${env}", "value": ...}`,
  );
}

function toDraft(d: DraftRow): Draft {
  return { id: d.config_id, env: d.env, value: JSON.parse(d.value) as unknown, baseVersion: d.base_version, updatedAt: d.updated_at };
}

function toConfig(row: ConfigRow, values: ValueRow[], drafts: DraftRow[]): Config {
  const envs = {} as Record<Env, EnvValue>;
  for (const env of ENVS) {
    const v = values.find((x) => x.env === env)!;
    envs[env] = { value: JSON.parse(v.value) as unknown, version: v.version, updatedAt: v.updated_at };
  }
  const byEnv: Partial<Record<Env, DraftValue>> = {};
  for (const env of ENVS) {
    const d = drafts.find((x) => x.env === env);
    if (d) byEnv[env] = { value: JSON.parse(d.value) as unknown, baseVersion: d.base_version, updatedAt: d.updated_at };
  }
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    schema: JSON.parse(row.schema) as unknown,
    envs,
    drafts: byEnv,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
