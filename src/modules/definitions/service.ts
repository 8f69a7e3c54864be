import { approvalHolder, runApproved } from "../../lib/approvals";
import { recordAudit } from "../../lib/audit";
import { ENVS, type Env } from "../../lib/envs";
import { ApiError, validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import type { ChangeRequest } from "../requests/types";
import { IMPORTERS, type ImportOptions, type ImportResult, TOOL_NAMES, type Tool } from "./importers";
import { type Actor, KINDS } from "./kinds";
import { DOCUMENT_VERSION, type DefinitionsDocument, ENTRIES_MAX, type Entry, type FieldChange, type Plan, type PlannedChange, SECTIONS, type Section } from "./types";

export * from "./types";

/** Audit action of one apply: its plan, besides the owning modules' own rows for each change. */
export const APPLY_ACTION = "definitions.apply";

/** The change kind (src/lib/changes.ts) of a whole document applied as one change: what apply opens a change request with. */
export const APPLY_CHANGE = "definitions.apply";

/** Thrown inside a dry run's transaction so that nothing it wrote is kept. */
class DryRunDone extends Error {}

export type ExportOptions = { envs?: readonly Env[]; only?: readonly Section[] };
export type ApplyOptions = { prune?: boolean; dryRun?: boolean; envs?: readonly Env[] };
/** Apply's answer: the plan, whether it was made, and (dry run) whether applying would open a change request. */
export type ApplyResult = Plan & { applied: boolean; approvalRequired?: true };
/** What apply answers instead when an env it publishes on requires approval: the request it opened, and its plan. */
export type Proposed = { request: ChangeRequest; plan: Plan };

/** `0 created, 1 changed, 0 deleted`: a plan's counts, for titles and summaries. */
export function countsText(summary: Plan["summary"]): string {
  return `${summary.create} created, ${summary.update} changed, ${summary.delete} deleted`;
}

const approvalRequired = (err: unknown) => err instanceof ApiError && err.code === "APPROVAL_REQUIRED";

function fail(at: string, message: string): never {
  throw validation(`Invalid definitions document: ${message}`, `${at}: ${message}`);
}

/** Field-by-field differences of two entries of a section (envs compared per env and field). */
function diff(before: Entry | undefined, after: Entry): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (field: string, a: unknown, b: unknown, depth: number) => {
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    // envs.<env>.<field>: one line per changed part, the rest stays whole.
    if (depth < 2 && typeof b === "object" && b !== null && !Array.isArray(b) && (field === "envs" || field.startsWith("envs."))) {
      const left = (typeof a === "object" && a !== null ? a : {}) as Record<string, unknown>;
      for (const [k, v] of Object.entries(b)) walk(`${field}.${k}`, left[k], v, depth + 1);
      return;
    }
    out.push({ field, before: a ?? null, after: b });
  };
  for (const [field, value] of Object.entries(after)) if (field !== "name") walk(field, before?.[field], value, 0);
  return out;
}

/**
 * Flags as code (issue 31): a project's definitions as one document, and applying a document as a plan of
 * creates, updates and (with prune) deletes through the owning modules' services, in dependency order.
 * An apply is one transaction: every service call joins it (src/lib/store/base.ts), so the first refusal
 * rolls back everything before it, and a dry run is the same apply rolled back at the end, so it
 * checks everything apply would.
 */
export class DefinitionsService {
  constructor(private readonly ctx: ServiceContext) {}

  async export(projectId: string, options: ExportOptions = {}): Promise<DefinitionsDocument> {
    const envs = options.envs ?? ENVS;
    const doc: DefinitionsDocument = { version: DOCUMENT_VERSION };
    for (const section of SECTIONS) {
      if (options.only && !options.only.includes(section)) continue;
      doc[section] = await KINDS[section].export(this.ctx, projectId, envs);
    }
    return doc;
  }

  /**
   * Another tool's export as a definitions document, by the importer `svc import` runs (conversion only:
   * nothing is read or written). An export of which nothing maps, or one whose document could never be
   * applied (more than ENTRIES_MAX entries), is VALIDATION, as the CLI refuses it.
   */
  importFrom(tool: Tool, raw: Record<string, unknown>, options: ImportOptions = {}): ImportResult {
    const name = TOOL_NAMES[tool];
    let result: ImportResult;
    try {
      result = IMPORTERS[tool](raw, options);
    } catch (err) {
      // The importers read any JSON; should one still trip on a shape, the caller hears why, never a 500.
      throw validation(`The body is not ${name}'s export`, `(body): ${(err as Error).message}`);
    }
    if (Object.keys(result.document).length === 1) {
      throw validation(`Nothing in the body maps onto svc: is it ${name}'s export?`, `(body): ${result.unmapped.map((u) => u.reason).join("; ") || "no flags in it"}`);
    }
    const entries = SECTIONS.reduce((n, s) => n + (result.document[s]?.length ?? 0), 0);
    if (entries > ENTRIES_MAX) throw validation("Too many entries", `(body): it maps onto ${entries} entries; one document holds at most ${ENTRIES_MAX}`);
    return result;
  }

  /** The document checked for shape and normalised, by section and name. */
  parse(raw: unknown, envs: readonly Env[] = ENVS): Map<Section, Map<string, Entry>> {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail("document", "an object with version and sections");
    const doc = raw as Record<string, unknown>;
    if (doc.version !== DOCUMENT_VERSION) fail("version", `${DOCUMENT_VERSION} (the version svc export writes)`);
    const unknown = Object.keys(doc).filter((k) => k !== "version" && !(SECTIONS as readonly string[]).includes(k));
    if (unknown.length > 0) fail(unknown[0]!, `unknown section (one of ${SECTIONS.join(", ")})`);
    const out = new Map<Section, Map<string, Entry>>();
    let count = 0;
    for (const section of SECTIONS) {
      const entries = doc[section];
      if (entries === undefined) continue;
      if (!Array.isArray(entries)) fail(section, "a list of entries");
      const byName = new Map<string, Entry>();
      entries.forEach((raw, i) => {
        const at = `${section}[${i}]`;
        if (++count > ENTRIES_MAX) fail(at, `at most ${ENTRIES_MAX} entries in one document`);
        if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail(at, "an object with a name");
        const name = (raw as { name?: unknown }).name;
        if (typeof name !== "string" || name.length === 0 || name.length > 128) fail(`${at}.name`, "text of 1 to 128 characters");
        if (byName.has(name)) fail(`${at}.name`, `${name} appears twice in ${section}`);
        byName.set(name, KINDS[section].normalize(raw as Record<string, unknown>, at, envs));
      });
      out.set(section, byName);
    }
    return out;
  }

  /** What applying `raw` would change; sections the document leaves out are left alone (prune included). */
  async plan(projectId: string, raw: unknown, options: ApplyOptions = {}): Promise<Plan> {
    return this.planOf(projectId, this.parse(raw, options.envs), options);
  }

  private async planOf(projectId: string, wanted: Map<Section, Map<string, Entry>>, options: ApplyOptions): Promise<Plan> {
    return planFrom(await this.currentOf(projectId, wanted), wanted, options);
  }

  /** What the project holds now of the sections `wanted` names (read through the transaction when inside one). */
  private async currentOf(projectId: string, wanted: Map<Section, Map<string, Entry>>): Promise<Map<Section, Map<string, Entry>>> {
    const current = new Map<Section, Map<string, Entry>>();
    for (const section of SECTIONS) {
      if (wanted.has(section)) current.set(section, new Map((await KINDS[section].export(this.ctx, projectId, ENVS)).map((e) => [e.name, e])));
    }
    return current;
  }

  /**
   * Makes the plan's changes in one transaction: creates and updates in section order (attributes and
   * segments before the gates and configs that name them; gates first made, then given their rules, so
   * one may name another), then deletes in reverse order. `dryRun` runs all of it and rolls it back; when
   * the direct-publish guard refuses part of it (an env requiring approval), the dry run goes on as the
   * approved path would run it and says `approvalRequired`, so a plan checks what the request would apply.
   */
  async apply(projectId: string, raw: unknown, actor: Actor, options: ApplyOptions = {}): Promise<ApplyResult> {
    const wanted = this.parse(raw, options.envs);
    const attempt = () => this.make(projectId, wanted, { email: actor.email, type: actor.type }, options);
    if (!options.dryRun) {
      const plan = await attempt();
      return { ...plan, applied: plan.changes.length > 0 };
    }
    try {
      return { ...(await attempt()), applied: false };
    } catch (err) {
      if (!approvalRequired(err)) throw err;
      return { ...(await runApproved(attempt)), applied: false, approvalRequired: true };
    }
  }

  /**
   * Apply as `POST /api/admin/apply` does it (issue 31, "with change requests on for an env, apply opens them
   * instead of publishing"): when the guard refuses the apply (rolled back, nothing kept), the whole document
   * becomes ONE change request holding a `definitions.apply` change, opened by the caller; nothing is published
   * until another person approves it and it is applied. The guard itself decides, so exactly the publishes it
   * would refuse (a change on an env requiring approval; a segment's, on every env) open a request.
   */
  async applyOrPropose(projectId: string, raw: unknown, actor: Actor, options: ApplyOptions & { title?: string; reason?: string } = {}): Promise<ApplyResult | Proposed> {
    if (options.dryRun) return this.apply(projectId, raw, actor, options);
    try {
      return await this.apply(projectId, raw, actor, options);
    } catch (err) {
      if (!approvalRequired(err)) throw err;
    }
    const plan = await this.plan(projectId, raw, options);
    const change = { kind: APPLY_CHANGE, document: raw, ...(options.prune ? { prune: true } : {}), ...(options.envs ? { env: options.envs.join(",") } : {}), summary: plan.summary };
    const request = await this.ctx.services.requests.open(projectId, { title: options.title ?? `svc apply: ${countsText(plan.summary)}`, reason: options.reason, changes: [change] }, actor);
    return { request, plan };
  }

  /**
   * One transaction that plans against what it reads and makes that plan's changes (rolled back when `dryRun`):
   * the plan and its changes come from the same reading, so nothing can move between them. Inside an outer write
   * (an approved request's apply) it joins that one. Nothing to change: nothing written, not even the audit row.
   */
  private async make(projectId: string, wanted: Map<Section, Map<string, Entry>>, by: Actor, options: ApplyOptions): Promise<Plan> {
    let plan: Plan = { changes: [], summary: { create: 0, update: 0, delete: 0 } };
    try {
      await this.ctx.store.write(async (tx) => {
        // Applies of one project take turns: a second one plans against what the first made (on PostgreSQL too).
        await tx.lock(`definitions-apply:${projectId}`);
        const current = await this.currentOf(projectId, wanted);
        plan = planFrom(current, wanted, options);
        if (plan.changes.length === 0) return;
        const upserts = plan.changes.filter((c) => c.action !== "delete");
        // Gates are created rule-less first, so rules may name gates later in the document.
        for (const c of upserts) {
          if (c.section !== "gates" || c.action !== "create") continue;
          const entry = wanted.get("gates")!.get(c.name)!;
          await KINDS.gates.apply(this.ctx, projectId, undefined, { ...entry, envs: {} }, by);
          current.get("gates")!.set(c.name, { ...entry, envs: Object.fromEntries(ENVS.map((env) => [env, { rules: [] }])) });
        }
        for (const c of upserts) {
          const entry = wanted.get(c.section)!.get(c.name)!;
          await KINDS[c.section].apply(this.ctx, projectId, current.get(c.section)!.get(c.name), entry, by);
        }
        for (const c of plan.changes) if (c.action === "delete") await KINDS[c.section].remove!(this.ctx, projectId, c.name, by);
        // Applied as an approved change request's change: the row names the request (`request: cr_…`).
        const holder = approvalHolder();
        const detail = { ...plan.summary, changes: plan.changes.slice(0, 100).map((c) => `${c.action} ${c.section} ${c.name}`), ...(holder ? { [holder.type]: holder.id } : {}) };
        await recordAudit(tx, { projectId, action: APPLY_ACTION, subjectId: projectId, subjectName: "definitions", actor: by, detail });
        if (options.dryRun) throw new DryRunDone();
      });
    } catch (err) {
      if (!(err instanceof DryRunDone)) throw err;
    }
    return plan;
  }
}

/** The plan that turns `current` into `wanted`: creates and updates by section, then deletes (with `prune`) in reverse. */
function planFrom(current: Map<Section, Map<string, Entry>>, wanted: Map<Section, Map<string, Entry>>, options: ApplyOptions): Plan {
  const changes: PlannedChange[] = [];
  const deletes: PlannedChange[] = [];
  for (const section of SECTIONS) {
    const next = wanted.get(section);
    if (!next) continue;
    const have = current.get(section) ?? new Map<string, Entry>();
    for (const [name, entry] of next) {
      const before = have.get(name);
      const fields = diff(before, entry);
      if (!before) changes.push({ section, name, action: "create", changes: fields });
      else if (fields.length > 0) changes.push({ section, name, action: "update", changes: fields });
    }
    if (options.prune && KINDS[section].remove) {
      for (const name of have.keys()) if (!next.has(name)) deletes.push({ section, name, action: "delete", changes: [] });
    }
  }
  // In the order apply makes them: creates and updates by section, then deletes in reverse (configs before the gates they name).
  changes.push(...deletes.reverse());
  const summary = { create: 0, update: 0, delete: 0 };
  for (const c of changes) summary[c.action]++;
  return { changes, summary };
}
