import { type Db, writeTransaction } from "../../lib/db";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import { CONTROL_CHARS, checkLimit, checkResourceName } from "../../lib/validate";
import type { RevisionsService } from "../delivery/revisions";
import { ENVS, type Env } from "../projects/service";

export const NAME_MAX = 128;
export const SWITCH_KEY_MAX = 128;
export const DESCRIPTION_MAX = 1000;
/** Sub-switches one killswitch may hold per env. */
export const SWITCHES_MAX = 256;
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

/** Who made a change, as recorded on every published version. */
export type Actor = { email: string; type: string };

export type Switches = Record<string, boolean>;

/** What SDKs see for one killswitch on one env. */
export type Published = { value: boolean; switches: Switches };

export type KillswitchEnvState = Published & { version: number; updatedAt: string; updatedBy: string };

export type Killswitch = {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
  updatedAt: string;
  envs: Record<Env, KillswitchEnvState>;
};

export type CreateInput = { name: string; value?: boolean; switches?: Switches; description?: string | null };
export type ToggleInput = { env?: Env; switchKey?: string; value?: boolean | null };

export type ToggleResult = {
  id: string;
  env: Env;
  switchKey: string | null;
  previous: boolean;
  value: boolean;
  version: number;
  published: Published;
};

export type HistoryEntry = Published & {
  version: number;
  env: Env;
  action: string;
  actorEmail: string;
  actorType: string;
  createdAt: string;
};

/** The `action` of each kind of publish, as recorded in the history. */
export const ACTIONS = {
  create: "killswitch.create",
  toggle: "killswitch.toggle",
  switchSet: "killswitch.switch.set",
  switchDelete: "killswitch.switch.delete",
  valueSet: "killswitch.value.set",
  rollback: "killswitch.rollback",
} as const;

type KillswitchRow = { id: string; name: string; description: string | null; created_at: string; updated_at: string };
type EnvRow = { env: Env; value: number; switches: string; version: number; updated_at: string; updated_by: string };
type VersionRow = {
  version: number;
  env: Env;
  value: number;
  switches: string;
  action: string;
  actor_email: string;
  actor_type: string;
  created_at: string;
};

/** JSON maps drop this key on the way in and out (Elysia cleans it), so it could be set but never seen. */
const RESERVED_KEY = "__proto__";

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "ksw_", slashReason: "'/' separates a killswitch from a sub-switch in flag keys (name/switchKey)" });
  if (name === RESERVED_KEY) throw validation(`name must not be ${RESERVED_KEY}`, `name: ${RESERVED_KEY} is reserved`);
}

export function checkSwitchKey(key: string, field = "switchKey"): void {
  if (key.length < 1 || key.length > SWITCH_KEY_MAX) {
    throw validation(`${field} must be 1 to ${SWITCH_KEY_MAX} characters`, `${field}: ${key.length} characters; allowed 1 to ${SWITCH_KEY_MAX}`);
  }
  if (CONTROL_CHARS.test(key)) throw validation(`${field} must not contain control characters`, `${field}: control characters are not allowed`);
  if (key === RESERVED_KEY) throw validation(`${field} must not be ${RESERVED_KEY}`, `${field}: ${RESERVED_KEY} is reserved`);
}

function checkSwitchCount(count: number, field: string): void {
  if (count > SWITCHES_MAX) throw validation(`At most ${SWITCHES_MAX} sub-switches per env`, `${field}: ${count} entries; at most ${SWITCHES_MAX}`);
}

/** Own-property read: a key such as `toString` is an ordinary switch key here. */
function switchValue(switches: Switches, key: string): boolean | undefined {
  return Object.hasOwn(switches, key) ? switches[key] : undefined;
}

/** A copy with one entry set: an existing entry keeps its place, a new one goes last. */
function withSwitch(switches: Switches, key: string, value: boolean): Switches {
  return { ...switches, [key]: value };
}

function withoutSwitch(switches: Switches, key: string): Switches {
  const { [key]: _removed, ...rest } = switches;
  return rest;
}

function parseSwitches(json: string): Switches {
  return JSON.parse(json) as Switches;
}

function toEnvState(row: EnvRow): KillswitchEnvState {
  return {
    value: row.value === 1,
    switches: parseSwitches(row.switches),
    version: row.version,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

function toKillswitch(row: KillswitchRow, envs: Record<Env, KillswitchEnvState>): Killswitch {
  const description = row.description === null ? {} : { description: row.description };
  return { id: row.id, name: row.name, ...description, createdAt: row.created_at, updatedAt: row.updated_at, envs };
}

/**
 * Killswitches: a flat boolean plus named sub-switches, versioned per env.
 * Every publish is one `immediate` transaction that reads the env's current
 * state, writes the next one, keeps the full published version and bumps the
 * env's revision, so concurrent writers (other requests, the CLI, a second
 * process on the same file) never lose an update.
 */
export class KillswitchesService {
  private readonly byId;
  private readonly byName;
  private readonly envRows;
  private readonly envRow;
  private readonly updateEnv;
  private readonly insertVersion;
  private readonly touch;
  private readonly published;

  constructor(
    private readonly db: Db,
    private readonly revisions: RevisionsService,
  ) {
    const columns = "id, name, description, created_at, updated_at";
    this.byId = db.prepare<KillswitchRow, [string, string]>(`SELECT ${columns} FROM killswitches WHERE id = ? AND project_id = ?`);
    this.byName = db.prepare<KillswitchRow, [string, string]>(`SELECT ${columns} FROM killswitches WHERE name = ? AND project_id = ?`);
    this.envRows = db.prepare<EnvRow, [string]>(
      "SELECT env, value, switches, version, updated_at, updated_by FROM killswitch_envs WHERE killswitch_id = ?",
    );
    this.envRow = db.prepare<EnvRow, [string, string]>(
      "SELECT env, value, switches, version, updated_at, updated_by FROM killswitch_envs WHERE killswitch_id = ? AND env = ?",
    );
    this.updateEnv = db.prepare<{ version: number }, [number, string, string, string, string, string]>(
      `UPDATE killswitch_envs SET value = ?, switches = ?, version = version + 1, updated_at = ?, updated_by = ?
       WHERE killswitch_id = ? AND env = ? RETURNING version`,
    );
    this.insertVersion = db.prepare<never, [string, string, number, number, string, string, string, string, string]>(
      `INSERT INTO killswitch_versions (killswitch_id, env, version, value, switches, action, actor_email, actor_type, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.touch = db.prepare<never, [string, string]>("UPDATE killswitches SET updated_at = ? WHERE id = ?");
    this.published = db.prepare<{ name: string; value: number; switches: string; version: number }, [string, string]>(
      `SELECT k.name, e.value, e.switches, e.version
       FROM killswitches k JOIN killswitch_envs e ON e.killswitch_id = k.id
       WHERE k.project_id = ? AND e.env = ?`,
    );
  }

  /**
   * Everything published on one env, by name: the snapshot builder's one
   * query. The map and each `switches` have no prototype, so a lookup by a
   * key from a request (`toString`, `__proto__`) finds only real entries.
   */
  publishedForEnv(projectId: string, env: Env): Record<string, { value: boolean; switches: Switches; version: number }> {
    const out: Record<string, { value: boolean; switches: Switches; version: number }> = Object.create(null);
    for (const r of this.published.all(projectId, env)) {
      out[r.name] = { value: r.value === 1, switches: Object.assign(Object.create(null), parseSwitches(r.switches)), version: r.version };
    }
    return out;
  }

  async create(projectId: string, input: CreateInput, actor: Actor): Promise<Killswitch> {
    checkName(input.name);
    const switches = Object.fromEntries(Object.entries(input.switches ?? {}));
    for (const key of Object.keys(switches)) checkSwitchKey(key, `switches.${key}`);
    checkSwitchCount(Object.keys(switches).length, "switches");
    const description = input.description ?? null;
    if (description !== null && description.length > DESCRIPTION_MAX) {
      throw validation(`description must be at most ${DESCRIPTION_MAX} characters`, `description: ${description.length} characters`);
    }
    const value = input.value ?? false;

    return writeTransaction(this.db, () => {
      if (this.byName.get(input.name, projectId)) {
        throw alreadyExists(`A killswitch named ${input.name} already exists in this project`, "name: choose another name");
      }
      const id = newId("ksw");
      const now = nowIso();
      const switchesJson = JSON.stringify(switches);
      this.db
        .query("INSERT INTO killswitches (id, project_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
        .run(id, projectId, input.name, description, now, now);
      const insertEnv = this.db.query(
        "INSERT INTO killswitch_envs (killswitch_id, env, value, switches, version, updated_at, updated_by) VALUES (?, ?, ?, ?, 1, ?, ?)",
      );
      for (const env of ENVS) {
        insertEnv.run(id, env, value ? 1 : 0, switchesJson, now, actor.email);
        this.insertVersion.run(id, env, 1, value ? 1 : 0, switchesJson, ACTIONS.create, actor.email, actor.type, now);
        this.revisions.bump(projectId, env);
      }
      return this.load(this.byId.get(id, projectId)!);
    });
  }

  list(projectId: string, q?: string): Killswitch[] {
    const rows = this.db
      .query<KillswitchRow & EnvRow & { env_updated_at: string }, [string]>(
        `SELECT k.id, k.name, k.description, k.created_at, k.updated_at,
                e.env, e.value, e.switches, e.version, e.updated_at AS env_updated_at, e.updated_by
         FROM killswitches k JOIN killswitch_envs e ON e.killswitch_id = k.id
         WHERE k.project_id = ? ORDER BY k.name, k.id`,
      )
      .all(projectId);
    const byId = new Map<string, { row: KillswitchRow; envs: Partial<Record<Env, KillswitchEnvState>> }>();
    for (const r of rows) {
      let entry = byId.get(r.id);
      if (!entry) byId.set(r.id, (entry = { row: r, envs: {} }));
      entry.envs[r.env] = toEnvState({ ...r, updated_at: r.env_updated_at });
    }
    const all = [...byId.values()].map(({ row, envs }) => toKillswitch(row, envs as Record<Env, KillswitchEnvState>));
    return filterByQuery(all, q, (k) => [k.name, k.description]);
  }

  /** By id, else by name, within the project only. */
  get(projectId: string, idOrName: string): Killswitch {
    return this.load(this.resolve(projectId, idOrName));
  }

  /** Deletes the killswitch and its history; every env's revision moves so SDKs drop it. */
  async remove(projectId: string, idOrName: string): Promise<void> {
    await writeTransaction(this.db, () => {
      const row = this.resolve(projectId, idOrName);
      this.db.query("DELETE FROM killswitches WHERE id = ?").run(row.id);
      for (const env of ENVS) this.revisions.bump(projectId, env);
    });
  }

  /**
   * The four toggle rules: `{}` flips the flat value on prod; a switchKey
   * alone flips that entry (a missing one counts as false); a boolean value
   * publishes exactly that value; each call publishes one version on one env.
   */
  async toggle(projectId: string, idOrName: string, input: ToggleInput, actor: Actor): Promise<ToggleResult> {
    const env = input.env ?? "prod";
    const switchKey = input.switchKey ?? null;
    if (switchKey !== null) checkSwitchKey(switchKey);
    const explicit = input.value ?? null;
    const r = await this.publish(projectId, idOrName, env, ACTIONS.toggle, actor, (current) => {
      if (switchKey === null) {
        const value = explicit ?? !current.value;
        return { next: { value, switches: current.switches }, previous: current.value, value };
      }
      const previous = switchValue(current.switches, switchKey) ?? false;
      const value = explicit ?? !previous;
      const switches = withSwitch(current.switches, switchKey, value);
      checkSwitchCount(Object.keys(switches).length, "switchKey");
      return { next: { value: current.value, switches }, previous, value };
    });
    return { id: r.id, env, switchKey, previous: r.previous, value: r.value, version: r.version, published: r.published };
  }

  /** Sets (or adds) one sub-switch on one env; false keeps the entry in the map. */
  async setSwitch(
    projectId: string,
    idOrName: string,
    input: { env: Env; switchKey: string; value: boolean },
    actor: Actor,
  ): Promise<{ id: string; env: Env; switchKey: string; value: boolean; version: number }> {
    checkSwitchKey(input.switchKey);
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.switchSet, actor, (current) => {
      const switches = withSwitch(current.switches, input.switchKey, input.value);
      checkSwitchCount(Object.keys(switches).length, "switchKey");
      return { next: { value: current.value, switches } };
    });
    return { id: r.id, env: input.env, switchKey: input.switchKey, value: input.value, version: r.version };
  }

  /** Removes one sub-switch entry on one env; an entry that is not there is NOT_FOUND. */
  async deleteSwitch(
    projectId: string,
    idOrName: string,
    input: { env: Env; switchKey: string },
    actor: Actor,
  ): Promise<{ id: string; env: Env; switchKey: string; version: number }> {
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.switchDelete, actor, (current, ks) => {
      if (switchValue(current.switches, input.switchKey) === undefined) {
        throw notFound(`Killswitch ${ks.name} has no sub-switch ${input.switchKey} on ${input.env}`, `switchKey: ${input.switchKey}`);
      }
      return { next: { value: current.value, switches: withoutSwitch(current.switches, input.switchKey) } };
    });
    return { id: r.id, env: input.env, switchKey: input.switchKey, version: r.version };
  }

  /** Unconditional set of the flat value on one env. */
  async setValue(
    projectId: string,
    idOrName: string,
    input: { env: Env; value: boolean },
    actor: Actor,
  ): Promise<{ id: string; env: Env; value: boolean; version: number }> {
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.valueSet, actor, (current) => ({
      next: { value: input.value, switches: current.switches },
    }));
    return { id: r.id, env: input.env, value: input.value, version: r.version };
  }

  /** Published versions, newest first; all envs when `env` is absent. */
  history(projectId: string, idOrName: string, options: { env?: Env; limit?: number } = {}): HistoryEntry[] {
    const limit = options.limit ?? HISTORY_DEFAULT_LIMIT;
    checkLimit(limit, HISTORY_MAX_LIMIT);
    const ks = this.resolve(projectId, idOrName);
    const columns = "version, env, value, switches, action, actor_email, actor_type, created_at";
    const rows = options.env
      ? this.db
          .query<VersionRow, [string, string, number]>(
            `SELECT ${columns} FROM killswitch_versions WHERE killswitch_id = ? AND env = ? ORDER BY seq DESC LIMIT ?`,
          )
          .all(ks.id, options.env, limit)
      : this.db
          .query<VersionRow, [string, number]>(`SELECT ${columns} FROM killswitch_versions WHERE killswitch_id = ? ORDER BY seq DESC LIMIT ?`)
          .all(ks.id, limit);
    return rows.map((r) => ({
      version: r.version,
      env: r.env,
      value: r.value === 1,
      switches: parseSwitches(r.switches),
      action: r.action,
      actorEmail: r.actor_email,
      actorType: r.actor_type,
      createdAt: r.created_at,
    }));
  }

  /** Publishes a new version whose content equals an earlier version of the same env. */
  async rollback(projectId: string, idOrName: string, input: { env: Env; version: number }, actor: Actor): Promise<ToggleResult> {
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.rollback, actor, (current, ks) => {
      const target = this.db
        .query<{ value: number; switches: string }, [string, string, number]>(
          "SELECT value, switches FROM killswitch_versions WHERE killswitch_id = ? AND env = ? AND version = ?",
        )
        .get(ks.id, input.env, input.version);
      if (!target) throw notFound(`Killswitch ${ks.name} has no version ${input.version} on ${input.env}`, `version: ${input.version}`);
      const value = target.value === 1;
      return { next: { value, switches: parseSwitches(target.switches) }, previous: current.value, value };
    });
    return { id: r.id, env: input.env, switchKey: null, previous: r.previous, value: r.value, version: r.version, published: r.published };
  }

  private resolve(projectId: string, idOrName: string): KillswitchRow {
    const row = this.byId.get(idOrName, projectId) ?? this.byName.get(idOrName, projectId);
    if (!row) throw notFound(`Killswitch ${idOrName} not found`);
    return row;
  }

  private load(row: KillswitchRow): Killswitch {
    const envs = {} as Record<Env, KillswitchEnvState>;
    for (const r of this.envRows.all(row.id)) envs[r.env] = toEnvState(r);
    return toKillswitch(row, envs);
  }

  /**
   * The one publish path: inside a single write transaction, read the
   * env's state, let `change` compute the next one (it may throw to refuse),
   * write it with version + 1, keep the version row and bump the revision.
   */
  private publish<X extends { next: Published }>(
    projectId: string,
    idOrName: string,
    env: Env,
    action: string,
    actor: Actor,
    change: (current: KillswitchEnvState, ks: KillswitchRow) => X,
  ): Promise<X & { id: string; version: number; published: Published }> {
    return writeTransaction(this.db, () => {
      const ks = this.resolve(projectId, idOrName);
      const current = toEnvState(this.envRow.get(ks.id, env)!);
      const computed = change(current, ks);
      const { value, switches } = computed.next;
      const now = nowIso();
      const switchesJson = JSON.stringify(switches);
      const version = this.updateEnv.get(value ? 1 : 0, switchesJson, now, actor.email, ks.id, env)!.version;
      this.insertVersion.run(ks.id, env, version, value ? 1 : 0, switchesJson, action, actor.email, actor.type, now);
      this.touch.run(now, ks.id);
      this.revisions.bump(projectId, env);
      return { ...computed, id: ks.id, version, published: { value, switches } };
    });
  }
}
