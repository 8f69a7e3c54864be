import { recordAudit } from "../../lib/audit";
import { alreadyExists, forbidden, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso, randomBase62 } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { bumpEveryEnv } from "../../lib/revisions";
import type { Queryable } from "../../lib/store";
import { checkResourceName } from "../../lib/validate";
import { type PublishedUniverse, SEGMENTS, type SegmentRange, type UnitType } from "../../sdk/universes";
import { type UniverseRow, deleteUniverse, findUniverse, insertUniverse, universeByName, universesOfProject, updateUniverse } from "./store";

export type { PublishedUniverse, SegmentRange, UnitType } from "../../sdk/universes";

export const UNIT_TYPES = ["user_id", "account_id"] as const satisfies readonly UnitType[];
export const NAME_MAX = 128;

/**
 * The plans that may set a holdout: SPEC says "pro or above", and names only
 * `pro`; `business` and `enterprise` are taken as above it. Every other plan
 * (`free`, `starter`, anything unknown) is below pro.
 */
export const HOLDOUT_PLANS: readonly string[] = ["pro", "business", "enterprise"];

export const ACTIONS = { create: "universe.create", update: "universe.update", delete: "universe.delete" } as const;

export type Actor = { email: string; type: string };

/** A universe as the API shows it: the spec's fields in its own (snake) case, timestamps as every record has them. */
export type Universe = {
  id: string;
  name: string;
  unit_type: UnitType;
  /** `[start, end)` in segments (0..10,000), or null: no holdout. */
  holdout_range: SegmentRange | null;
  /** What the unit id is hashed with: fixed for the universe's life, so a unit keeps its segment. */
  salt: string;
  createdAt: string;
  updatedAt: string;
};

/** `holdout_range` as sent: checked here to be `[start, end)` (the schema checks its shape too). */
export type UniverseInput = { name: string; unit_type?: UnitType; holdout_range?: readonly number[] | null };
export type UniversePatch = { name?: string; unit_type?: UnitType; holdout_range?: readonly number[] | null };

/**
 * What uses a universe now: an experiment running in it, with the segments
 * it takes. The experiments module registers the check (`setInUseCheck`); a
 * universe in use cannot be deleted, and its holdout cannot be moved over a
 * running experiment's allocation.
 */
export type UniverseUse = { name: string; allocation: SegmentRange | null };
export type InUseCheck = (q: Queryable, projectId: string, universeId: string) => Promise<UniverseUse[]>;

/** The one lock of a project's universes: every universe write, and an experiment starting in one (it reads the holdout). */
export function lockScope(projectId: string): string {
  return `universes:${projectId}`;
}

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "uni_", slashReason: "'/' is not allowed in names used in paths" });
}

// One `field: why` per detail, never "; " inside it: clients (the dashboard) split details on "; " into fields.
const RANGE_RULE = `expected [start, end) in segments: two integers with 0 <= start < end <= ${SEGMENTS}, e.g. [0, 500] to hold out 5 % of units, or null for none`;

/** A holdout as the API takes it (the schema checks its shape too; this also covers calls that skip it). */
export function checkRange(range: unknown, field = "holdout_range"): SegmentRange | null {
  if (range === null) return null;
  const refuse = (message: string, why: string) => validation(message, `${field}: ${why} (${RANGE_RULE})`);
  if (!Array.isArray(range)) throw refuse(`${field} must be [start, end)`, "not an array");
  if (range.length !== 2) throw refuse(`${field} must be [start, end)`, `${range.length} item${range.length === 1 ? "" : "s"}, not 2`);
  const bad = range.find((n) => !Number.isInteger(n));
  if (bad !== undefined) throw refuse(`${field} must be whole segments`, `${JSON.stringify(bad)} is not an integer`);
  const [start, end] = range as [number, number];
  if (start < 0 || end > SEGMENTS) throw refuse(`${field} must lie within 0 to ${SEGMENTS}`, `${start < 0 ? start : end} is outside 0 to ${SEGMENTS}`);
  if (start >= end) throw refuse(`${field} must end after it starts`, `start ${start} is not below end ${end}`);
  return [start, end];
}

/** Whether two `[start, end)` segment ranges share a segment (a holdout and an allocation, two allocations). */
export const overlaps = (a: SegmentRange, b: SegmentRange) => a[0] < b[1] && b[0] < a[1];

function toUniverse(r: UniverseRow): Universe {
  const holdout: SegmentRange | null = r.holdout_start === null || r.holdout_end === null ? null : [Number(r.holdout_start), Number(r.holdout_end)];
  return { id: r.id, name: r.name, unit_type: r.unit_type as UnitType, holdout_range: holdout, salt: r.salt, createdAt: r.created_at, updatedAt: r.updated_at };
}

const duplicateName = (name: string) => alreadyExists(`A universe named ${name} already exists in this project`, "name: choose another name");

/**
 * Universes: the unit spaces experiments split. A universe hashes each
 * unit's id (`user_id` or `account_id`) with its salt into one of 10,000
 * segments (src/sdk/universes.ts, shared with the SDK); experiments take
 * disjoint segment ranges and the holdout range is given to none. Every
 * write is one transaction under the project's universes lock that records
 * its audit row and bumps every env's revision, since the snapshot of every
 * env publishes the universes.
 */
export class UniversesService {
  private inUse: InUseCheck = async () => [];

  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Registers what uses a universe (the experiments module: the running
   * experiments in it). Called inside the deleting or updating transaction,
   * under the universes lock, so an experiment that starts under the same
   * lock is never missed.
   */
  setInUseCheck(check: InUseCheck): void {
    this.inUse = check;
  }

  async list(projectId: string, q?: string): Promise<Universe[]> {
    const rows = (await universesOfProject(this.ctx.store, projectId)).map(toUniverse);
    return filterByQuery(rows, q, (u) => [u.name]);
  }

  async get(projectId: string, idOrName: string): Promise<Universe> {
    return toUniverse(await this.find(this.ctx.store, projectId, idOrName));
  }

  /** A universe by id or name, read in the caller's transaction (experiments: under `lockScope`). */
  async resolve(q: Queryable, projectId: string, idOrName: string): Promise<Universe> {
    return toUniverse(await this.find(q, projectId, idOrName));
  }

  /** The snapshot's `universes` section (the same on every env): by name, no prototype. */
  async published(projectId: string): Promise<Record<string, PublishedUniverse>> {
    const out: Record<string, PublishedUniverse> = Object.create(null);
    for (const u of (await universesOfProject(this.ctx.store, projectId)).map(toUniverse)) {
      out[u.name] = { id: u.id, unit_type: u.unit_type, holdout_range: u.holdout_range, salt: u.salt };
    }
    return out;
  }

  async create(projectId: string, input: UniverseInput, actor: Actor): Promise<{ id: string; name: string }> {
    checkName(input.name);
    const unitType = checkUnitType(input.unit_type ?? "user_id");
    const holdout = input.holdout_range === undefined ? null : checkRange(input.holdout_range);
    if (holdout) await this.checkPlan(projectId);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        if (await universeByName(tx, projectId, input.name)) throw duplicateName(input.name);
        const now = nowIso();
        const row: UniverseRow = {
          id: newId("uni"),
          name: input.name,
          unit_type: unitType,
          holdout_start: holdout?.[0] ?? null,
          holdout_end: holdout?.[1] ?? null,
          salt: randomBase62(16),
          created_at: now,
          updated_at: now,
        };
        await insertUniverse(tx, projectId, row);
        await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: row.id, subjectName: row.name, actor, detail: { unit_type: unitType, holdout_range: holdout } });
        await bumpEveryEnv(tx, projectId);
        return { id: row.id, name: row.name };
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  /**
   * A partial update: `name` renames, `holdout_range` moves the holdout (null
   * removes it; a range needs plan pro or above, and may not cover a running
   * experiment's segments). `unit_type` cannot change: every unit's segment
   * and so every assignment would change (the same value is accepted).
   * Nothing different from what is stored: nothing is written.
   */
  async update(projectId: string, idOrName: string, patch: UniversePatch, actor: Actor): Promise<Universe> {
    if (patch.name !== undefined) checkName(patch.name);
    if (patch.unit_type !== undefined) checkUnitType(patch.unit_type);
    const holdout = patch.holdout_range === undefined ? undefined : checkRange(patch.holdout_range);
    if (holdout) await this.checkPlan(projectId);
    const name = patch.name;
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        const row = await this.find(tx, projectId, idOrName);
        if (patch.unit_type !== undefined && patch.unit_type !== row.unit_type) {
          throw validation(
            `unit_type cannot change once the universe exists (it is ${row.unit_type})`,
            `unit_type: a new unit type would move every unit to another segment and change every experiment's assignments, so create another universe with unit_type ${patch.unit_type}`,
          );
        }
        const next: UniverseRow = {
          ...row,
          name: name ?? row.name,
          holdout_start: holdout === undefined ? row.holdout_start : (holdout?.[0] ?? null),
          holdout_end: holdout === undefined ? row.holdout_end : (holdout?.[1] ?? null),
        };
        const fields: string[] = [];
        if (next.name !== row.name) fields.push("name");
        if (JSON.stringify(toUniverse(next).holdout_range) !== JSON.stringify(toUniverse(row).holdout_range)) fields.push("holdout_range");
        if (fields.length === 0) return toUniverse(row);
        if (next.name !== row.name && (await universeByName(tx, projectId, next.name))) throw duplicateName(next.name);
        if (holdout) {
          const clashes = (await this.inUse(tx, projectId, row.id)).filter((use) => use.allocation && overlaps(use.allocation, holdout));
          if (clashes.length > 0) {
            const names = clashes.map((c) => `${c.name} [${c.allocation![0]}, ${c.allocation![1]})`).join(", ");
            throw validation(`The holdout would cover segments of running experiment${clashes.length > 1 ? "s" : ""} ${names}`, `holdout_range: overlaps running experiment${clashes.length > 1 ? "s" : ""} ${names}: stop them first or choose other segments`);
          }
        }
        next.updated_at = nowIso();
        await updateUniverse(tx, next);
        const before = toUniverse(row);
        const after = toUniverse(next);
        // What changed, before and after (fields only).
        const pick = (u: Universe) => Object.fromEntries(fields.map((f) => [f, u[f as keyof Universe]]));
        await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: row.id, subjectName: next.name, actor, detail: { fields, before: pick(before), after: pick(after) } });
        await bumpEveryEnv(tx, projectId);
        return after;
      });
    } catch (err) {
      if (name !== undefined && this.ctx.store.isUniqueViolation(err)) throw duplicateName(name);
      throw err;
    }
  }

  /** Deletes a universe no running experiment uses (else VALIDATION naming them). */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, idOrName);
      const uses = await this.inUse(tx, projectId, row.id);
      if (uses.length > 0) {
        const names = uses.map((u) => u.name).join(", ");
        const plural = uses.length > 1 ? "s" : "";
        throw validation(`Universe ${row.name} has running experiment${plural} ${names}; stop them first`, `id: experiment${plural} ${names} running in universe ${row.name}`);
      }
      await deleteUniverse(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.name, actor, detail: { unit_type: row.unit_type } });
      await bumpEveryEnv(tx, projectId);
    });
  }

  private async checkPlan(projectId: string): Promise<void> {
    const plan = (await this.ctx.services.projects.find(projectId))?.plan ?? "none";
    if (!HOLDOUT_PLANS.includes(plan)) {
      throw forbidden(`A holdout needs plan pro or above; this project is on plan ${plan}`, `holdout_range: needs plan ${HOLDOUT_PLANS.join(", ")} (send null or leave it out)`);
    }
  }

  private async find(q: Queryable, projectId: string, idOrName: string): Promise<UniverseRow> {
    const row = await findUniverse(q, projectId, idOrName);
    if (!row) throw notFound(`Universe ${idOrName} not found`);
    return row;
  }
}

function checkUnitType(unitType: string): UnitType {
  if (!(UNIT_TYPES as readonly string[]).includes(unitType)) throw validation("Unknown unit_type", `unit_type: one of ${UNIT_TYPES.join(", ")}`);
  return unitType as UnitType;
}
