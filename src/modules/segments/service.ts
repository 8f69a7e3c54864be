import { guardPublish } from "../../lib/approvals";
import { recordAudit } from "../../lib/audit";
import type { Env } from "../../lib/envs";
import { ApiError, alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { bumpRevision } from "../../lib/revisions";
import type { Queryable, Tx } from "../../lib/store";
import { CONTROL_CHARS, checkResourceName } from "../../lib/validate";
import type { GateCondition, PublishedSegment } from "../../sdk/gates";
import type { ConfigRule } from "../../sdk/configs";
import { asGateRules } from "../configs/rules";
import { conditionCost, withSegmentCosts } from "../gates/cost";
import { SEGMENT_REF_OPS, checkConditions, referencedSegments } from "../gates/rules";
import { EVALUATION_COST_MAX } from "../gates/types";
import { type SegmentRow, type SegmentRowWithIds, deleteSegment, findSegment, hasSegments, insertSegment, segmentByName, segmentsOfProject, updateSegment } from "./store";

export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;
/** Ids in one segment's list: GrowthBook's saved groups and LaunchDarkly's big segments are of this order. */
export const IDS_MAX = 100_000;
export const ID_CHARS_MAX = 256;
const ATTR = /^[A-Za-z0-9_.:$-]{1,128}$/;

export const ACTIONS = { create: "segment.create", update: "segment.update", delete: "segment.delete" } as const;

export type Actor = { email: string; type: string };

/** A segment as the list shows it: its ids are counted, not listed (up to 100,000 of them). */
export type SegmentSummary = {
  id: string;
  name: string;
  description: string;
  /** The context attribute the ids are matched on (default `user_id`). */
  attribute: string;
  conditions: GateCondition[];
  idCount: number;
  createdAt: string;
  updatedAt: string;
};
export type Segment = SegmentSummary & { ids: string[] };

export type SegmentInput = { name: string; description?: string; conditions?: unknown; attribute?: string; ids?: unknown };
export type SegmentPatch = Partial<SegmentInput> & { addIds?: unknown; removeIds?: unknown };

function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "seg_", slashReason: "'/' is not allowed in names used in paths" });
}

function checkDescription(description: string): void {
  if (description.length > DESCRIPTION_MAX) throw validation(`description must be at most ${DESCRIPTION_MAX} characters`, `description: ${description.length} characters`);
}

function checkAttribute(attribute: string): void {
  if (!ATTR.test(attribute)) throw validation("Invalid attribute", "attribute: an attribute name: 1 to 128 letters, digits, _ . : $ or -");
}

/**
 * A segment's conditions: the gate operators, checked as a gate rule's are, minus references to gates
 * and segments (a segment stands alone, so it is evaluated in bounded time and published by itself),
 * and within the evaluation bound by themselves.
 */
export function checkSegmentConditions(conditions: unknown): GateCondition[] {
  const checked = checkConditions(conditions, "conditions");
  checked.forEach((c, i) => {
    if (SEGMENT_REF_OPS.includes(c.op) || c.op === "passes_gate" || c.op === "fails_gate") {
      throw validation(`A segment's conditions cannot use ${c.op}`, `conditions[${i}].op: a segment's conditions cannot name gates or other segments`);
    }
  });
  const cost = costOf(checked);
  if (cost > EVALUATION_COST_MAX) throw validation("The segment's conditions are too costly to evaluate", `conditions: ${cost} units for one evaluation, over the limit of ${EVALUATION_COST_MAX}; use fewer or simpler conditions`);
  return checked;
}

/**
 * An id list (`field`: ids, addIds or removeIds, as the detail names it): text ids of at most 256 characters,
 * no control characters, at most 100,000, deduplicated (first occurrence kept).
 */
export function checkIds(ids: unknown, field = "ids"): string[] {
  if (!Array.isArray(ids)) throw validation(`${field} must be a list`, `${field}: a list of unit ids (text)`);
  if (ids.length > IDS_MAX) throw validation(`A segment holds at most ${IDS_MAX} ids`, `${field}: ${ids.length} ids; at most ${IDS_MAX}`);
  const seen = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    const id: unknown = ids[i];
    if (typeof id !== "string" || id.length === 0 || id.length > ID_CHARS_MAX) throw validation("Invalid id", `${field}[${i}]: non-empty text of at most ${ID_CHARS_MAX} characters`);
    if (CONTROL_CHARS.test(id)) throw validation("Invalid id", `${field}[${i}]: control characters are not allowed`);
    seen.add(id);
  }
  return [...seen];
}

/** A PATCH's change to the id list: a whole new list (`ids`), or ids to drop and ids to add (checked here, applied to the stored list under the lock). */
type IdsChange = { replace: string[] } | { remove: string[]; add: string[] } | undefined;

function idsChangeOf(patch: SegmentPatch): IdsChange {
  const partial = patch.addIds !== undefined || patch.removeIds !== undefined;
  if (patch.ids !== undefined && partial) {
    const field = patch.addIds !== undefined ? "addIds" : "removeIds";
    throw validation(`ids cannot be sent with ${field}`, `${field}: not with ids (ids replaces the whole list; send one or the other)`);
  }
  if (patch.ids !== undefined) return { replace: checkIds(patch.ids) };
  if (!partial) return undefined;
  return { remove: patch.removeIds === undefined ? [] : checkIds(patch.removeIds, "removeIds"), add: patch.addIds === undefined ? [] : checkIds(patch.addIds, "addIds") };
}

/** The stored list with the change applied: removals first, then additions not already listed, at the end; at most 100,000 in all. */
function applyIdsChange(stored: string[], change: { remove: string[]; add: string[] }): string[] {
  const removed = new Set(change.remove);
  const kept = removed.size === 0 ? stored : stored.filter((id) => !removed.has(id));
  const present = new Set(kept);
  const next = kept.concat(change.add.filter((id) => !present.has(id)));
  if (next.length > IDS_MAX) {
    throw validation(`A segment holds at most ${IDS_MAX} ids`, `addIds: the list would hold ${next.length} ids (${kept.length} kept + ${next.length - kept.length} added); at most ${IDS_MAX}`);
  }
  return next;
}

/** The id list `patch` leaves from `stored` (undefined: it does not touch the ids), as update computes it. */
export function idsAfter(stored: string[], patch: SegmentPatch): string[] | undefined {
  const change = idsChangeOf(patch);
  if (change === undefined) return undefined;
  return "replace" in change ? change.replace : applyIdsChange(stored, change);
}

/** The segments a config's rules name (the gates' own reading of rules). */
function namedSegments(rules: ConfigRule[]): Set<string> {
  return new Set(referencedSegments(asGateRules(rules)).map((ref) => ref.name));
}

function costOf(conditions: GateCondition[]): number {
  let cost = 0;
  for (const c of conditions) cost += conditionCost(c);
  return cost;
}

function parseConditions(text: string): GateCondition[] {
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? (parsed as GateCondition[]) : [];
}

function toSummary(r: SegmentRow): SegmentSummary {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    attribute: r.attribute,
    conditions: parseConditions(r.conditions),
    idCount: Number(r.id_count),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toSegment(r: SegmentRowWithIds): Segment {
  return { ...toSummary(r), ids: JSON.parse(r.ids) as string[] };
}

const duplicateName = (name: string) => alreadyExists(`A segment named ${name} already exists in this project`, "name: choose another name");

/** The segments' lock of a project; taken after the gates' (segment writes take both, in that order, as a gate publish reads segments under the gates' lock). */
const lockScope = (projectId: string) => `segments:${projectId}`;

/**
 * Segments: named sets of units, reused by gate rules through in_segment /
 * not_in_segment. A unit is in a segment when its `attribute` is one of the
 * ids, or when the segment's conditions (non-empty) all hold. The snapshot of
 * an env carries each segment its published rules name, once (`segments`).
 * Every write is one transaction, under the project's gates lock, that records
 * its audit row; a change bumps the revision of every env whose rules name
 * the segment, so SDKs and streams get it.
 */
export class SegmentsService {
  constructor(private readonly ctx: ServiceContext) {}

  async list(projectId: string, q?: string): Promise<SegmentSummary[]> {
    const rows = (await segmentsOfProject(this.ctx.store, projectId)).map(toSummary);
    return filterByQuery(rows, q, (s) => [s.name, s.description]);
  }

  async get(projectId: string, idOrName: string): Promise<Segment> {
    return toSegment(await this.find(this.ctx.store, projectId, idOrName));
  }

  /** Each named segment's evaluation cost beyond its condition's own 1 (absent: no such segment). */
  async costs(q: Queryable, projectId: string, names: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (names.length === 0) return out;
    const wanted = new Set(names);
    for (const r of await segmentsOfProject(q, projectId)) if (wanted.has(r.name)) out.set(r.name, costOf(parseConditions(r.conditions)));
    return out;
  }

  /** The snapshot's `segments` section: each segment the env's published rules name, once, by name (no prototype). */
  async publishedForEnv(projectId: string, env: Env): Promise<Record<string, PublishedSegment>> {
    const out: Record<string, PublishedSegment> = Object.create(null);
    // Only names with a segment row go in: a project without segments (most) skips reading every gate's,
    // config's and rollout's rules again, which each publish's snapshot read did (issue 32).
    if (!(await hasSegments(this.ctx.store, projectId))) return out;
    const used = await this.ctx.services.gates.segmentsUsed(this.ctx.store, projectId, env);
    for (const name of await this.ctx.services.configs.segmentsUsed(this.ctx.store, projectId, env)) used.add(name);
    for (const r of await this.ctx.services.rollouts.configRules(this.ctx.store, projectId)) if (r.env === env && r.serving) for (const name of namedSegments(r.rules)) used.add(name);
    for (const name of [...used].sort()) {
      const row = await segmentByName(this.ctx.store, projectId, name);
      if (!row) continue;
      const s: PublishedSegment = { attribute: row.attribute };
      if (Number(row.id_count) > 0) s.ids = JSON.parse(row.ids) as string[];
      const conditions = parseConditions(row.conditions);
      if (conditions.length > 0) s.conditions = conditions;
      out[name] = s;
    }
    return out;
  }

  async create(projectId: string, input: SegmentInput, actor: Actor): Promise<{ id: string; name: string }> {
    checkName(input.name);
    const description = input.description ?? "";
    checkDescription(description);
    const attribute = input.attribute ?? "user_id";
    checkAttribute(attribute);
    const conditions = input.conditions === undefined ? [] : checkSegmentConditions(input.conditions);
    const ids = input.ids === undefined ? [] : checkIds(input.ids);
    try {
      return await this.ctx.store.write(async (tx) => {
        await this.lock(tx, projectId);
        if (await segmentByName(tx, projectId, input.name)) throw duplicateName(input.name);
        const now = nowIso();
        const row: SegmentRowWithIds = {
          id: newId("seg"),
          name: input.name,
          description,
          attribute,
          conditions: JSON.stringify(conditions),
          ids: JSON.stringify(ids),
          id_count: ids.length,
          created_at: now,
          updated_at: now,
        };
        await insertSegment(tx, projectId, row);
        await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: row.id, subjectName: row.name, actor, detail: { attribute, conditions: conditions.length, ids: ids.length } });
        return { id: row.id, name: row.name };
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  /**
   * Fields sent replace the stored ones (`ids` replaces the whole list). A rename is refused while
   * rules name the segment (they name it by name). Every env whose published rules name the segment
   * gets one new revision, recorded in the audit row's `envs`.
   */
  async update(projectId: string, idOrName: string, patch: SegmentPatch, actor: Actor): Promise<Segment> {
    if (patch.name !== undefined) checkName(patch.name);
    if (patch.description !== undefined) checkDescription(patch.description);
    if (patch.attribute !== undefined) checkAttribute(patch.attribute);
    const conditions = patch.conditions === undefined ? undefined : checkSegmentConditions(patch.conditions);
    const change = idsChangeOf(patch);
    try {
      return await this.ctx.store.write(async (tx) => {
        await this.lock(tx, projectId);
        const row = await this.find(tx, projectId, idOrName);
        // A segment is used on every env: any env requiring approval makes a change to it go through a request.
        await guardPublish(tx, { projectId, env: null, resource: "segments", subject: row.id, actor });
        // addIds / removeIds apply to the list as read under the lock, so concurrent imports all land.
        const ids = change === undefined ? undefined : "replace" in change ? change.replace : applyIdsChange(JSON.parse(row.ids) as string[], change);
        const next: SegmentRowWithIds = {
          ...row,
          name: patch.name ?? row.name,
          description: patch.description ?? row.description,
          attribute: patch.attribute ?? row.attribute,
          conditions: conditions === undefined ? row.conditions : JSON.stringify(conditions),
          ids: ids === undefined ? row.ids : JSON.stringify(ids),
          id_count: ids === undefined ? Number(row.id_count) : ids.length,
        };
        const fields = (["name", "description", "attribute", "conditions", "ids"] as const).filter((f) => next[f] !== row[f]);
        if (fields.length === 0) return toSegment(row);
        const uses = await this.usesOf(tx, projectId, row.name);
        if (next.name !== row.name) {
          if (uses.users.length > 0) throw validation(`Segment ${row.name} is used by ${uses.users.join(", ")}; it cannot be renamed`, `name: segment ${row.name} is named by ${uses.users.join(", ")}; change them first`);
          if (await segmentByName(tx, projectId, next.name)) throw duplicateName(next.name);
        }
        // The gates naming it were priced with its old conditions: a costlier set must keep them within the bound.
        if (conditions !== undefined && costOf(conditions) > costOf(parseConditions(row.conditions))) {
          for (const env of uses.envs) {
            await this.ctx.services.gates.checkSegmentChange(tx, projectId, env, row.name, costOf(conditions));
            await this.checkConfigsWith(tx, projectId, env, row.name, costOf(conditions));
          }
        }
        next.updated_at = nowIso();
        await updateSegment(tx, next);
        for (const env of uses.envs) await bumpRevision(tx, projectId, env);
        const detail: Record<string, unknown> = { fields, envs: uses.envs };
        if (fields.includes("ids")) detail.ids = { before: Number(row.id_count), after: next.id_count };
        if (fields.includes("name")) detail.name = { before: row.name, after: next.name };
        await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: row.id, subjectName: next.name, actor, detail });
        return toSegment(next);
      });
    } catch (err) {
      if (patch.name !== undefined && this.ctx.store.isUniqueViolation(err)) throw duplicateName(patch.name);
      throw err;
    }
  }

  /** Deletes a segment nothing names: published gate rules, unfinished rollouts, templates (409 naming them otherwise). */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await this.lock(tx, projectId);
      const row = await this.find(tx, projectId, idOrName);
      const uses = await this.usesOf(tx, projectId, row.name);
      if (uses.users.length > 0) {
        const names = uses.users.join(", ");
        throw new ApiError("ALREADY_EXISTS", `Segment ${row.name} is used by ${names}; remove it from them first`, `id: named by in_segment/not_in_segment in ${names}`);
      }
      await deleteSegment(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.name, actor, detail: { ids: Number(row.id_count) } });
    });
  }

  /**
   * Where the segment is used: gates as `name (env)`, configs as `config name (env)` (in `gates`, the
   * list every message names), and the envs whose published rules name it.
   */
  private async usesOf(q: Queryable, projectId: string, name: string): Promise<{ users: string[]; envs: Env[] }> {
    const gates = await this.ctx.services.gates.segmentUses(q, projectId, name);
    const configs = await this.ctx.services.configs.segmentUses(q, projectId, name);
    const envs = new Set<Env>([...gates.envs, ...configs.envs]);
    const users = [...gates.users, ...configs.configs];
    for (const r of await this.ctx.services.rollouts.configRules(q, projectId)) {
      if (!namedSegments(r.rules).has(name)) continue;
      users.push(`rollout ${r.id} of config ${r.config} (${r.env})`);
      envs.add(r.env);
    }
    return { users, envs: (["dev", "staging", "prod"] as Env[]).filter((e) => envs.has(e)) };
  }

  /** A segment change (its conditions now costing `cost`) must keep every config rule naming it on the env within the bound. */
  private async checkConfigsWith(tx: Tx, projectId: string, env: Env, segment: string, cost: number): Promise<void> {
    const costs = new Map([[segment, cost]]);
    for (const { name, rules } of await this.ctx.services.configs.rulesNaming(tx, projectId, env, segment)) {
      // The gates' cost of a condition, with this segment at its new cost (other segments count as their condition's 1).
      const total = withSegmentCosts(costs, () => rules.reduce((sum, r) => sum + r.conditions.reduce((n, c) => n + conditionCost(c), 0), 0));
      if (total > EVALUATION_COST_MAX) throw validation(`Config ${name} names this segment and would cost too much to evaluate`, `conditions: config ${name} (${env}) would go over the evaluation bound with these conditions (${total} units; at most ${EVALUATION_COST_MAX})`);
    }
  }

  /** Taken by a publish that names segments (configs' rules), so none of them is deleted before it commits. */
  lockForReference(tx: Tx, projectId: string): Promise<void> {
    return tx.lock(lockScope(projectId));
  }

  private async lock(tx: Tx, projectId: string): Promise<void> {
    await this.ctx.services.gates.lockProject(tx, projectId);
    await tx.lock(lockScope(projectId));
  }

  private async find(q: Queryable, projectId: string, idOrName: string): Promise<SegmentRowWithIds> {
    const row = await findSegment(q, projectId, idOrName);
    if (!row) throw notFound(`Segment ${idOrName} not found`);
    return row;
  }
}
