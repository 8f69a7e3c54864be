import { recordAudit } from "../../lib/audit";
import { ENVS, type Env } from "../../lib/envs";
import { validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { type Actor, KINDS } from "./kinds";
import { DOCUMENT_VERSION, type DefinitionsDocument, ENTRIES_MAX, type Entry, type FieldChange, type Plan, type PlannedChange, SECTIONS, type Section } from "./types";

export * from "./types";

/** Audit action of one apply: its plan, besides the owning modules' own rows for each change. */
export const APPLY_ACTION = "definitions.apply";

/** Thrown inside a dry run's transaction so that nothing it wrote is kept. */
class DryRunDone extends Error {}

export type ExportOptions = { envs?: readonly Env[]; only?: readonly Section[] };
export type ApplyOptions = { prune?: boolean; dryRun?: boolean; envs?: readonly Env[] };

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
    const changes: PlannedChange[] = [];
    const deletes: PlannedChange[] = [];
    for (const section of SECTIONS) {
      const next = wanted.get(section);
      if (!next) continue;
      const current = new Map((await KINDS[section].export(this.ctx, projectId, ENVS)).map((e) => [e.name, e]));
      for (const [name, entry] of next) {
        const have = current.get(name);
        const fields = diff(have, entry);
        if (!have) changes.push({ section, name, action: "create", changes: fields });
        else if (fields.length > 0) changes.push({ section, name, action: "update", changes: fields });
      }
      if (options.prune && KINDS[section].remove) {
        for (const name of current.keys()) if (!next.has(name)) deletes.push({ section, name, action: "delete", changes: [] });
      }
    }
    // In the order apply makes them: creates and updates by section, then deletes in reverse (configs before the gates they name).
    changes.push(...deletes.reverse());
    const summary = { create: 0, update: 0, delete: 0 };
    for (const c of changes) summary[c.action]++;
    return { changes, summary };
  }

  /**
   * Makes the plan's changes in one transaction: creates and updates in section order (attributes and
   * segments before the gates and configs that name them; gates first made, then given their rules, so
   * one may name another), then deletes in reverse order. `dryRun` runs all of it and rolls it back.
   */
  async apply(projectId: string, raw: unknown, actor: Actor, options: ApplyOptions = {}): Promise<Plan & { applied: boolean }> {
    const wanted = this.parse(raw, options.envs);
    const plan = await this.planOf(projectId, wanted, options);
    if (plan.changes.length === 0) return { ...plan, applied: false };
    const by: Actor = { email: actor.email, type: actor.type };
    try {
      await this.ctx.store.write(async (tx) => {
        const current = new Map<Section, Map<string, Entry>>();
        for (const section of SECTIONS) current.set(section, new Map((await KINDS[section].export(this.ctx, projectId, ENVS)).map((e) => [e.name, e])));
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
        await recordAudit(tx, { projectId, action: APPLY_ACTION, subjectId: projectId, subjectName: "definitions", actor: by, detail: { ...plan.summary, changes: plan.changes.slice(0, 100).map((c) => `${c.action} ${c.section} ${c.name}`) } });
        if (options.dryRun) throw new DryRunDone();
      });
    } catch (err) {
      if (err instanceof DryRunDone) return { ...plan, applied: false };
      throw err;
    }
    return { ...plan, applied: true };
  }
}
