import { guardPublish, runBypass } from "../../lib/approvals";
import { recordAudit } from "../../lib/audit";
import { emitEvent } from "../../lib/outbox";
import { ENVS, type Env } from "../../lib/envs";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Queryable, Tx } from "../../lib/store";
import { checkNameChars, checkResourceName } from "../../lib/validate";
import { Versioned } from "../../lib/versioned";
import { type Content, type EnvRow, type KillswitchRow, insertKillswitch, parseSwitches, toEnvState, toKillswitch, touchKillswitch, setKillswitchDescription } from "./store";
import { type Actor, type Switches, type Published, type KillswitchEnvState, type Killswitch } from "./types";
export { type Actor, type Switches, type Published, type KillswitchEnvState, type Killswitch };

export const NAME_MAX = 128;
export const SWITCH_KEY_MAX = 128;
export const DESCRIPTION_MAX = 1000;
/** Sub-switches one killswitch may hold per env. */
export const SWITCHES_MAX = 256;
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

export type CreateInput = { name: string; value?: boolean; switches?: Switches; description?: string | null };
export type ToggleInput = { env?: Env; switchKey?: string; value?: boolean | null; reason?: string };

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

/** The audit action of a delete (the history goes with the killswitch, so it has no version row). */
export const DELETE_ACTION = "killswitch.delete";
/** The audit action of a description change (publishes nothing, so no version row either). */
export const DESCRIPTION_ACTION = "killswitch.update";

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
  checkNameChars(field, key);
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

function duplicateName(name: string) {
  return alreadyExists(`A killswitch named ${name} already exists in this project`, "name: choose another name");
}

/** The tables of the shared versioned-per-env publish path (src/lib/versioned.ts). */
const versioned = new Versioned<KillswitchRow>({
  scope: "killswitches",
  entity: "killswitches",
  entityColumns: ["id", "name", "description", "created_at", "updated_at"],
  live: "killswitch_envs",
  versions: "killswitch_versions",
  ref: "killswitch_id",
  content: ["value", "switches"],
  liveExtra: ["updated_by"],
  versionExtra: ["action"],
  notFound: (idOrName) => notFound(`Killswitch ${idOrName} not found`),
  historyLimit: { default: HISTORY_DEFAULT_LIMIT, max: HISTORY_MAX_LIMIT },
});

/** What `change` computes from the env's current state: the next published state, plus what the caller reports. */
type Change = { next: Published; previous?: boolean; value?: boolean; detail?: Record<string, unknown> };

/**
 * Killswitches: a flat boolean plus named sub-switches, versioned per env.
 * Every publish is one write transaction that locks the killswitch
 * (`killswitches:<projectId>:<id>`, on every server), reads the env's
 * current state, writes the next one, keeps the full published version,
 * bumps the env's revision and records its audit row, so concurrent writers
 * (other requests, other servers, the CLI) never lose an update.
 */
export class KillswitchesService {
  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Everything published on one env, by name: the SDK snapshot's
   * `killswitches` section. The map and each `switches` have no prototype,
   * so a lookup by a key from a request (`toString`, `__proto__`) finds only
   * real entries.
   */
  async publishedForEnv(projectId: string, env: Env): Promise<Record<string, { value: boolean; switches: Switches; version: number }>> {
    const out: Record<string, { value: boolean; switches: Switches; version: number }> = Object.create(null);
    for (const r of await versioned.published<Content>(this.ctx.store, projectId, env)) {
      out[r.name] = { value: Number(r.value) === 1, switches: Object.assign(Object.create(null), parseSwitches(r.switches)), version: r.version };
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

    try {
      return await this.ctx.store.write(async (tx) => {
        // Name uniqueness is a decision over the whole project.
        await versioned.lockProject(tx, projectId);
        if (await versioned.findByName(tx, projectId, input.name)) throw duplicateName(input.name);
        // Created off (every sub-switch off too) it kills nothing: allowed as is. Created on, it publishes a kill on
        // every env at once: refused where an env requires approval (a killswitch.create request instead).
        if (value || Object.values(switches).some(Boolean)) {
          for (const env of ENVS) await guardPublish(tx, { projectId, env, resource: "killswitches", subject: input.name, actor, kind: "killswitch.create" });
        }
        const id = newId("ksw");
        const now = nowIso();
        await insertKillswitch(tx, { id, projectId, name: input.name, description, now });
        await versioned.publishFirst(tx, {
          projectId,
          id,
          content: { value: value ? 1 : 0, switches: JSON.stringify(switches) },
          liveExtra: { updated_by: actor.email },
          versionExtra: { action: ACTIONS.create },
          actor,
          now,
        });
        await recordAudit(tx, {
          projectId,
          action: ACTIONS.create,
          subjectId: id,
          subjectName: input.name,
          actor,
          detail: { value, switches: Object.keys(switches).length, version: 1 },
        });
        return this.load(tx, await versioned.resolve(tx, projectId, id));
      });
    } catch (err) {
      // The last line of defence: UNIQUE (project_id, name).
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  async list(projectId: string, q?: string): Promise<Killswitch[]> {
    const { store } = this.ctx;
    const rows = await versioned.ofProject(store, projectId);
    const matching = filterByQuery(rows, q, (k) => [k.name, k.description]);
    if (matching.length === 0) return [];
    const envs = new Map<string, Partial<Record<Env, KillswitchEnvState>>>();
    for (const r of await versioned.liveOfProject<EnvRow & { killswitch_id: string }>(store, projectId)) {
      let entry = envs.get(r.killswitch_id);
      if (!entry) envs.set(r.killswitch_id, (entry = {}));
      entry[r.env] = toEnvState(r);
    }
    // A killswitch created after the first read has no live rows in this answer yet: leave it out.
    return matching.filter((row) => envs.has(row.id)).map((row) => toKillswitch(row, envs.get(row.id) as Record<Env, KillswitchEnvState>));
  }

  /** The env's published version, read through `q` (a transaction's, to read inside it): a pending change's staleness check (src/lib/changes.ts). */
  async publishedVersion(q: Queryable, projectId: string, idOrName: string, env: Env): Promise<number> {
    const row = await versioned.resolve(q, projectId, idOrName);
    return Number((await versioned.current(q, row.id, env)).version);
  }

  /** The env's published value and sub-switches, read through `q`: a change request's "published now" (src/lib/changes.ts). */
  async publishedState(q: Queryable, projectId: string, idOrName: string, env: Env): Promise<KillswitchEnvState> {
    const row = await versioned.resolve(q, projectId, idOrName);
    return toEnvState(await versioned.current<EnvRow>(q, row.id, env));
  }

  /** By id, else by name, within the project only. */
  async get(projectId: string, idOrName: string): Promise<Killswitch> {
    const { store } = this.ctx;
    const ks = await this.load(store, await versioned.resolve(store, projectId, idOrName));
    // Deleted between the two reads.
    if (Object.keys(ks.envs).length < ENVS.length) throw versioned.tables.notFound(idOrName);
    return ks;
  }

  /** Changes the description (publishes nothing): what `svc apply` needs of a definitions document (issue 31). */
  async updateDescription(projectId: string, idOrName: string, description: string, actor: Actor): Promise<void> {
    if (description.length > DESCRIPTION_MAX) throw validation(`description must be at most ${DESCRIPTION_MAX} characters`, `description: ${description.length} characters`);
    await this.ctx.store.write(async (tx) => {
      const row = await versioned.lock(tx, projectId, idOrName);
      await setKillswitchDescription(tx, row.id, description === "" ? null : description, nowIso());
      await recordAudit(tx, { projectId, action: DESCRIPTION_ACTION, subjectId: row.id, subjectName: row.name, actor, detail: { description } });
    });
  }

  /** Deletes the killswitch and its history; every env's revision moves so SDKs drop it. */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      const row = await versioned.lock(tx, projectId, idOrName);
      await versioned.remove(tx, projectId, row.id);
      await recordAudit(tx, { projectId, action: DELETE_ACTION, subjectId: row.id, subjectName: row.name, actor });
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
    // A reason makes it an emergency bypass of approval where the project allows one (src/lib/approvals.ts).
    const run = <T>(fn: () => Promise<T>) => (input.reason ? runBypass(input.reason, fn) : fn());
    const r = await run(() => this.publish(projectId, idOrName, env, ACTIONS.toggle, actor, async (current) => {
      if (switchKey === null) {
        const value = explicit ?? !current.value;
        return { next: { value, switches: current.switches }, previous: current.value, value, detail: { switchKey, previous: current.value, value } };
      }
      const previous = switchValue(current.switches, switchKey) ?? false;
      const value = explicit ?? !previous;
      const switches = withSwitch(current.switches, switchKey, value);
      checkSwitchCount(Object.keys(switches).length, "switchKey");
      return { next: { value: current.value, switches }, previous, value, detail: { switchKey, previous, value } };
    }));
    return { id: r.id, env, switchKey, previous: r.previous!, value: r.value!, version: r.version, published: r.published };
  }

  /** Sets (or adds) one sub-switch on one env; false keeps the entry in the map. */
  async setSwitch(
    projectId: string,
    idOrName: string,
    input: { env: Env; switchKey: string; value: boolean },
    actor: Actor,
  ): Promise<{ id: string; env: Env; switchKey: string; value: boolean; version: number }> {
    checkSwitchKey(input.switchKey);
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.switchSet, actor, async (current) => {
      const switches = withSwitch(current.switches, input.switchKey, input.value);
      checkSwitchCount(Object.keys(switches).length, "switchKey");
      return { next: { value: current.value, switches }, detail: { switchKey: input.switchKey, value: input.value } };
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
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.switchDelete, actor, async (current, ks) => {
      if (switchValue(current.switches, input.switchKey) === undefined) {
        throw notFound(`Killswitch ${ks.name} has no sub-switch ${input.switchKey} on ${input.env}`, `switchKey: ${input.switchKey}`);
      }
      return { next: { value: current.value, switches: withoutSwitch(current.switches, input.switchKey) }, detail: { switchKey: input.switchKey } };
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
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.valueSet, actor, async (current) => ({
      next: { value: input.value, switches: current.switches },
      detail: { previous: current.value, value: input.value },
    }));
    return { id: r.id, env: input.env, value: input.value, version: r.version };
  }

  /** Published versions, newest first; all envs when `env` is absent. */
  async history(projectId: string, idOrName: string, options: { env?: Env; limit?: number } = {}): Promise<HistoryEntry[]> {
    const rows = await versioned.history<Content & { action: string }>(this.ctx.store, projectId, idOrName, options);
    return rows.map((r) => ({
      version: r.version,
      env: r.env,
      value: Number(r.value) === 1,
      switches: parseSwitches(r.switches),
      action: r.action,
      actorEmail: r.actor_email,
      actorType: r.actor_type,
      createdAt: r.created_at,
    }));
  }

  /** Publishes a new version whose content equals an earlier version of the same env. */
  async rollback(projectId: string, idOrName: string, input: { env: Env; version: number }, actor: Actor): Promise<ToggleResult> {
    const r = await this.publish(projectId, idOrName, input.env, ACTIONS.rollback, actor, async (current, ks, tx) => {
      const target = await versioned.version<Content>(tx, ks.id, input.env, input.version);
      if (!target) throw notFound(`Killswitch ${ks.name} has no version ${input.version} on ${input.env}`, `version: ${input.version}`);
      const value = Number(target.value) === 1;
      return { next: { value, switches: parseSwitches(target.switches) }, previous: current.value, value, detail: { from: input.version, value } };
    });
    return { id: r.id, env: input.env, switchKey: null, previous: r.previous!, value: r.value!, version: r.version, published: r.published };
  }

  private async load(q: Queryable, row: KillswitchRow): Promise<Killswitch> {
    const envs = {} as Record<Env, KillswitchEnvState>;
    for (const r of await versioned.live<EnvRow>(q, row.id)) envs[r.env] = toEnvState(r);
    return toKillswitch(row, envs);
  }

  /**
   * The one publish path of this module: in one write transaction, lock the
   * killswitch, read the env's state, let `change` compute the next one (it
   * may throw to refuse, changing nothing), publish it as version + 1 (with
   * its version row and the revision bump) and record the audit row.
   */
  private publish<X extends Change>(
    projectId: string,
    idOrName: string,
    env: Env,
    action: string,
    actor: Actor,
    change: (current: KillswitchEnvState, ks: KillswitchRow, tx: Tx) => Promise<X>,
  ): Promise<X & { id: string; version: number; published: Published }> {
    return this.ctx.store.write(async (tx) => {
      const ks = await versioned.lock(tx, projectId, idOrName);
      const current = toEnvState(await versioned.current<EnvRow>(tx, ks.id, env));
      const computed = await change(current, ks, tx);
      const { value, switches } = computed.next;
      const now = nowIso();
      const version = await versioned.publish(tx, {
        projectId,
        id: ks.id,
        env,
        content: { value: value ? 1 : 0, switches: JSON.stringify(switches) },
        liveExtra: { updated_by: actor.email },
        versionExtra: { action },
        actor,
        now,
      });
      await touchKillswitch(tx, ks.id, now);
      await recordAudit(tx, { projectId, action, subjectId: ks.id, subjectName: ks.name, env, actor, detail: { version, ...computed.detail } });
      // What connectors hear (the outbox, in this transaction; payload in connectors/events.ts).
      await emitEvent(tx, { projectId, type: "killswitch.toggled", payload: { killswitchId: ks.id, name: ks.name, env, action, version, value, switches, ...computed.detail, actor: actor.email } });
      return { ...computed, id: ks.id, version, published: { value, switches } };
    });
  }
}
