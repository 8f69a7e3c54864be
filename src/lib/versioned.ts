import type { AuditActor } from "./audit";
import { guardPublish } from "./approvals";
import { ENVS, type Env } from "./envs";
import { bumpEveryEnv, bumpRevision } from "./revisions";
import type { Param, Queryable, Tx } from "./store";
import { ApiError } from "./errors";
import { closest } from "./suggest";
import { checkLimit } from "./validate";

/**
 * How a module stores something it publishes per env with numbered versions
 * (killswitches, configs; later gates, experiments, translations). Three
 * tables, named by the module:
 *
 * - the entity: `id`, `project_id`, `name` (unique in the project), ...
 * - the live state, one row per (entity, env): `<ref>`, `env`, the content
 *   columns, `version`, `updated_at`, and any live-only columns;
 * - every published version: `seq` (insertion order), `<ref>`, `env`,
 *   `version`, the content columns, any version-only columns, `actor_email`,
 *   `actor_type`, `created_at`; UNIQUE (`<ref>`, `env`, `version`).
 *
 * Table and column names are the module's constants, never request data.
 */
export type VersionedTables = {
  /** Lock scopes are `<scope>:<projectId>` (creates) and `<scope>:<projectId>:<entity id>`; usually the module name. */
  scope: string;
  entity: string;
  /** What `find`/`lock` read from the entity table; must include `id` and `name`. */
  entityColumns: readonly string[];
  live: string;
  versions: string;
  /** The column of the live and version tables that names the entity. */
  ref: string;
  /** What is published: in the live row and in every version row. */
  content: readonly string[];
  /** Set on the live row with each publish only (e.g. `updated_by`). */
  liveExtra?: readonly string[];
  /** Kept on version rows only (e.g. `action`). */
  versionExtra?: readonly string[];
  /** The module's NOT_FOUND for an id or name that is not in the project. */
  notFound(idOrName: string): Error;
  historyLimit: { default: number; max: number };
};

export type Values = Record<string, Param>;

/** One publish: the next version of one env. */
export type PublishInput = {
  projectId: string;
  /** The entity's id (from `lock`). */
  id: string;
  env: Env;
  content: Values;
  liveExtra?: Values;
  versionExtra?: Values;
  actor: AuditActor;
  now: string;
};

export type HistoryOptions = { env?: Env; limit?: number };

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function identifiers(names: readonly string[]): string[] {
  for (const name of names) if (!IDENTIFIER.test(name)) throw new Error(`versioned: not a plain SQL identifier: ${name}`);
  return [...names];
}

/** The values of `columns` from `values`, in order; a missing one is a bug of the caller. */
function pick(columns: readonly string[], values: Values | undefined, what: string): Param[] {
  return columns.map((c) => {
    const v = values?.[c];
    if (v === undefined) throw new Error(`versioned: ${what} misses ${c}`);
    return v;
  });
}

/** Code-unit order (SQLite's BINARY collation), the same on both engines whatever PostgreSQL's collation is. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The versioned-per-env publish path, once for every module: resolve by id
 * or name, lock, next version, version row, revision bump, history. Every
 * write method takes the module's open transaction (`store.write`) and
 * publishes nothing by itself outside it; audit rows stay with the module
 * (one per user action, which may publish several envs).
 */
export class Versioned<E extends { id: string; name: string }> {
  private readonly sql: {
    byId: string;
    byName: string;
    ofProject: string;
    namesOfProject: string;
    live: string;
    liveOne: string;
    liveOfProject: string;
    insertLive: string;
    update: string;
    insertVersion: string;
    version: string;
    historyEnv: string;
    historyAll: string;
    published: string;
    remove: string;
  };
  private readonly content: string[];
  private readonly liveExtra: string[];
  private readonly versionExtra: string[];

  constructor(readonly tables: VersionedTables) {
    const [entity, live, versions, ref] = identifiers([tables.entity, tables.live, tables.versions, tables.ref]);
    const entityColumns = identifiers(tables.entityColumns).join(", ");
    this.content = identifiers(tables.content);
    this.liveExtra = identifiers(tables.liveExtra ?? []);
    this.versionExtra = identifiers(tables.versionExtra ?? []);
    const liveColumns = [ref, "env", ...this.content, "version", "updated_at", ...this.liveExtra];
    const versionColumns = ["env", "version", ...this.content, ...this.versionExtra, "actor_email", "actor_type", "created_at"];
    const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");
    const insertedVersion = [ref, ...versionColumns];
    this.sql = {
      byId: `SELECT ${entityColumns} FROM ${entity} WHERE id = ? AND project_id = ?`,
      byName: `SELECT ${entityColumns} FROM ${entity} WHERE name = ? AND project_id = ?`,
      ofProject: `SELECT ${entityColumns} FROM ${entity} WHERE project_id = ?`,
      namesOfProject: `SELECT name FROM ${entity} WHERE project_id = ? LIMIT 10000`,
      live: `SELECT ${liveColumns.join(", ")} FROM ${live} WHERE ${ref} = ?`,
      liveOne: `SELECT ${liveColumns.join(", ")} FROM ${live} WHERE ${ref} = ? AND env = ?`,
      liveOfProject: `SELECT ${liveColumns.map((c) => `l.${c}`).join(", ")} FROM ${live} l JOIN ${entity} e ON e.id = l.${ref} WHERE e.project_id = ?`,
      insertLive: `INSERT INTO ${live} (${liveColumns.join(", ")}) VALUES (${marks(liveColumns.length)})`,
      update: `UPDATE ${live} SET ${[...this.content, ...this.liveExtra].map((c) => `${c} = ?`).join(", ")}, version = version + 1, updated_at = ?
       WHERE ${ref} = ? AND env = ? RETURNING version`,
      insertVersion: `INSERT INTO ${versions} (${insertedVersion.join(", ")}) VALUES (${marks(insertedVersion.length)})`,
      version: `SELECT ${versionColumns.join(", ")} FROM ${versions} WHERE ${ref} = ? AND env = ? AND version = ?`,
      historyEnv: `SELECT ${versionColumns.join(", ")} FROM ${versions} WHERE ${ref} = ? AND env = ? ORDER BY seq DESC LIMIT ?`,
      historyAll: `SELECT ${versionColumns.join(", ")} FROM ${versions} WHERE ${ref} = ? ORDER BY seq DESC LIMIT ?`,
      published: `SELECT e.name, ${[...this.content, "version"].map((c) => `l.${c}`).join(", ")}
       FROM ${entity} e JOIN ${live} l ON l.${ref} = e.id WHERE e.project_id = ? AND l.env = ?`,
      remove: `DELETE FROM ${entity} WHERE id = ?`,
    };
  }

  /** By id, else by name, within the project only. */
  async find(q: Queryable, projectId: string, idOrName: string): Promise<E | undefined> {
    return (await q.one<E>(this.sql.byId, idOrName, projectId)) ?? (await q.one<E>(this.sql.byName, idOrName, projectId));
  }

  async findByName(q: Queryable, projectId: string, name: string): Promise<E | undefined> {
    return q.one<E>(this.sql.byName, name, projectId);
  }

  /** `find`, or the module's NOT_FOUND. */
  async resolve(q: Queryable, projectId: string, idOrName: string): Promise<E> {
    const row = await this.find(q, projectId, idOrName);
    if (!row) throw await this.notFoundWithGuess(q, projectId, idOrName);
    return row;
  }

  /** The module's NOT_FOUND, with `name: did you mean "checkout"?` when a name of the project is one typo away. */
  private async notFoundWithGuess(q: Queryable, projectId: string, idOrName: string): Promise<Error> {
    const error = this.tables.notFound(idOrName);
    if (!(error instanceof ApiError) || error.detail !== undefined) return error;
    const guess = closest(idOrName, (await q.all<{ name: string }>(this.sql.namesOfProject, projectId)).map((r) => r.name));
    return guess === undefined ? error : new ApiError(error.code, error.message, `name: did you mean "${guess}"?`, error.status);
  }

  /** The project's entities, by name then id (code-unit order on both engines). */
  async ofProject(q: Queryable, projectId: string): Promise<E[]> {
    const rows = await q.all<E>(this.sql.ofProject, projectId);
    return rows.sort((a, b) => byText(a.name, b.name) || byText(a.id, b.id));
  }

  /** Serialises the project-wide decisions of this module (name uniqueness on create). */
  lockProject(tx: Tx, projectId: string): Promise<void> {
    return tx.lock(`${this.tables.scope}:${projectId}`);
  }

  /**
   * The first step of every read-then-write of one entity: resolves the id
   * or name, takes `<scope>:<projectId>:<id>` (so that calls by id and by
   * name serialise together), then reads the entity again under the lock.
   * One deleted meanwhile is looked up again by the same id or name.
   */
  async lock(tx: Tx, projectId: string, idOrName: string): Promise<E> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const seen = await this.resolve(tx, projectId, idOrName);
      await tx.lock(`${this.tables.scope}:${projectId}:${seen.id}`);
      const row = await tx.one<E>(this.sql.byId, seen.id, projectId);
      if (row) return row;
    }
    throw this.tables.notFound(idOrName);
  }

  /** Every env's live row of one entity. */
  async live<R>(q: Queryable, id: string): Promise<(R & { env: Env; version: number; updated_at: string })[]> {
    const rows = await q.all<R & { env: Env; version: number; updated_at: string }>(this.sql.live, id);
    for (const r of rows) r.version = Number(r.version);
    return rows;
  }

  /** One env's live row (under `lock`, the state the next version follows). */
  async current<R>(q: Queryable, id: string, env: Env): Promise<R & { env: Env; version: number; updated_at: string }> {
    const row = await q.one<R & { env: Env; version: number; updated_at: string }>(this.sql.liveOne, id, env);
    if (!row) throw this.tables.notFound(id);
    row.version = Number(row.version);
    return row;
  }

  /** Every live row of the project's entities (for lists). */
  async liveOfProject<R>(q: Queryable, projectId: string): Promise<(R & { env: Env; version: number; updated_at: string })[]> {
    const rows = await q.all<R & { env: Env; version: number; updated_at: string }>(this.sql.liveOfProject, projectId);
    for (const r of rows) r.version = Number(r.version);
    return rows;
  }

  /** Version 1 on every env for a new entity (inserted by the module just before), with its version rows and revision bumps. */
  async publishFirst(tx: Tx, input: Omit<PublishInput, "env">): Promise<void> {
    const content = pick(this.content, input.content, "content");
    const liveExtra = pick(this.liveExtra, input.liveExtra, "liveExtra");
    const versionExtra = pick(this.versionExtra, input.versionExtra, "versionExtra");
    for (const env of ENVS) {
      await tx.run(this.sql.insertLive, input.id, env, ...content, 1, input.now, ...liveExtra);
      await tx.run(this.sql.insertVersion, input.id, env, 1, ...content, ...versionExtra, input.actor.email, input.actor.type, input.now);
      await bumpRevision(tx, input.projectId, env);
    }
  }

  /**
   * The next version of one env: the live row takes the content with
   * version + 1, the version row is kept, the env's revision moves (and is
   * announced once the transaction commits). Call it under `lock`.
   */
  async publish(tx: Tx, input: PublishInput): Promise<number> {
    // Every per-env publish of killswitches, configs and gates passes here: the one place approval is enforced for them.
    await guardPublish(tx, { projectId: input.projectId, env: input.env, resource: this.tables.scope, subject: input.id, actor: input.actor });
    const content = pick(this.content, input.content, "content");
    const liveExtra = pick(this.liveExtra, input.liveExtra, "liveExtra");
    const versionExtra = pick(this.versionExtra, input.versionExtra, "versionExtra");
    const row = await tx.one<{ version: number }>(this.sql.update, ...content, ...liveExtra, input.now, input.id, input.env);
    if (!row) throw this.tables.notFound(input.id);
    const version = Number(row.version);
    await tx.run(this.sql.insertVersion, input.id, input.env, version, ...content, ...versionExtra, input.actor.email, input.actor.type, input.now);
    await bumpRevision(tx, input.projectId, input.env);
    return version;
  }

  /** Deletes the entity (its live and version rows go with it) and moves every env's revision so SDKs drop it. */
  async remove(tx: Tx, projectId: string, id: string): Promise<void> {
    await tx.run(this.sql.remove, id);
    await bumpEveryEnv(tx, projectId);
  }

  /** One published version of one env (a rollback's source), or undefined. */
  async version<R>(q: Queryable, id: string, env: Env, version: number): Promise<(R & { env: Env; version: number }) | undefined> {
    const row = await q.one<R & { env: Env; version: number }>(this.sql.version, id, env, version);
    if (row) row.version = Number(row.version);
    return row;
  }

  /**
   * Published versions, newest first; every env unless `env` is given. The
   * limit is checked first (VALIDATION naming `limit`), then the id or name.
   */
  async history<R>(
    q: Queryable,
    projectId: string,
    idOrName: string,
    options: HistoryOptions = {},
  ): Promise<(R & { env: Env; version: number; actor_email: string; actor_type: string; created_at: string })[]> {
    const limit = options.limit ?? this.tables.historyLimit.default;
    checkLimit(limit, this.tables.historyLimit.max);
    const entity = await this.resolve(q, projectId, idOrName);
    type Row = R & { env: Env; version: number; actor_email: string; actor_type: string; created_at: string };
    const rows = options.env
      ? await q.all<Row>(this.sql.historyEnv, entity.id, options.env, limit)
      : await q.all<Row>(this.sql.historyAll, entity.id, limit);
    for (const r of rows) r.version = Number(r.version);
    return rows;
  }

  /** What is published on one env, per entity name, in name order: the module's snapshot section reads this. */
  async published<R>(q: Queryable, projectId: string, env: Env): Promise<(R & { name: string; version: number })[]> {
    const rows = await q.all<R & { name: string; version: number }>(this.sql.published, projectId, env);
    for (const r of rows) r.version = Number(r.version);
    return rows.sort((a, b) => byText(a.name, b.name));
  }
}
