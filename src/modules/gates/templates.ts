import { recordAudit } from "../../lib/audit";
import { alreadyExists, forbidden, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Queryable, Tx } from "../../lib/store";
import { checkNameChars, checkOptionalText } from "../../lib/validate";
import type { GateCondition } from "../../sdk/gates";
import { SEGMENT_REF_OPS, checkConditions } from "./rules";
import { type TemplateRow, deleteTemplate, findTemplate, insertTemplate, templatesOfProject, updateTemplate } from "./store";
import { type Actor, DESCRIPTION_MAX } from "./types";

export type GateTemplate = {
  id: string;
  name: string;
  description: string;
  category: string;
  rules: GateCondition[];
  builtIn: boolean;
  createdAt: string | null;
  updatedAt: string | null;
};

/** `rules`, or `segment` (id or name): the one condition `{attr: <its attribute>, op: in_segment, value: <its name>}`. */
export type TemplateInput = { name: string; description?: string; category?: string; rules?: unknown; segment?: string };
export type TemplatePatch = { name?: string; description?: string; category?: string; rules?: unknown };

const TEMPLATE_NAME_MAX = 128;
const CATEGORY_MAX = 64;

/** The templates every project has: read-only, the same everywhere. */
export const BUILT_IN_TEMPLATES: GateTemplate[] = [
  {
    id: "gtpl_internal_users",
    name: "Internal users",
    description: "People whose email is at your company's domain (change the domain when you use it).",
    category: "condition",
    rules: [{ attr: "email", op: "ends_with", value: "@example.com" }],
  },
  { id: "gtpl_percentage_rollout", name: "Percentage rollout", description: "Everyone, by a stable share: set the gate rule's pass percentage.", category: "rollout", rules: [] },
  { id: "gtpl_country_list", name: "Country list", description: "Contexts whose country (ISO code) is in the list.", category: "condition", rules: [{ attr: "country", op: "in", value: ["us", "ca"] }] },
  {
    id: "gtpl_app_version_at_least",
    name: "App version at least",
    description: "Clients running this app version or newer (semantic versions).",
    category: "condition",
    rules: [{ attr: "app_version", op: "semver_gte", value: "1.0.0" }],
  },
  { id: "gtpl_beta_opt_in", name: "Beta opt-in", description: "People who turned on beta features (attribute beta_opt_in = true).", category: "condition", rules: [{ attr: "beta_opt_in", op: "eq", value: true }] },
].map((t) => ({ ...t, rules: t.rules as GateCondition[], builtIn: true, createdAt: null, updatedAt: null }));

function builtIn(idOrName: string): GateTemplate | undefined {
  return BUILT_IN_TEMPLATES.find((t) => t.id === idOrName || t.name === idOrName);
}

const readOnly = (t: GateTemplate) => forbidden(`${t.name} is a built-in template: built-ins are read-only`, "Create a template of your own (POST /api/admin/gates/templates) from its rules instead");

function checkText(field: string, value: string, max: number, required: boolean): void {
  if (required && value.trim() === "") throw validation(`${field} is required`, `${field}: must not be empty`);
  checkOptionalText(field, value, max);
}

function toTemplate(row: TemplateRow): GateTemplate {
  return { id: row.id, name: row.name, description: row.description, category: row.category, rules: JSON.parse(row.rules), builtIn: false, createdAt: row.created_at, updatedAt: row.updated_at };
}

/**
 * Gate templates: ready-made condition lists to start a gate from. The
 * built-ins are the same for every project and refuse every write; a
 * project's own are created, listed, changed and deleted here (names unique
 * in the project, built-in names included).
 */
/** A NOT_FOUND of a template lists this many names at most (the built-ins and the first of the project's own). */
const KNOWN_NAMES_SHOWN = 30;

export class GateTemplatesService {
  constructor(private readonly ctx: ServiceContext) {}

  async list(projectId: string, q?: string): Promise<GateTemplate[]> {
    const own = (await templatesOfProject(this.ctx.store, projectId)).map(toTemplate).sort((a, b) => (a.name < b.name ? -1 : 1));
    return filterByQuery([...BUILT_IN_TEMPLATES, ...own], q, (t) => [t.name, t.description, t.category]);
  }

  async get(projectId: string, idOrName: string, q: Queryable = this.ctx.store): Promise<GateTemplate> {
    const found = builtIn(idOrName) ?? (await findTemplate(q, projectId, idOrName));
    if (!found) throw notFound(`Gate template ${idOrName} not found`, await this.knownNames(projectId, q));
    return "builtIn" in found ? found : toTemplate(found);
  }

  /** `template: one of "Internal users", …`: what a mistyped template name could have been (the project's own after the built-ins). */
  private async knownNames(projectId: string, q: Queryable): Promise<string> {
    const own = (await templatesOfProject(q, projectId)).map((row) => row.name).sort();
    const names = [...BUILT_IN_TEMPLATES.map((t) => t.name), ...own];
    const shown = names.slice(0, KNOWN_NAMES_SHOWN).map((n) => JSON.stringify(n));
    return `template: one of ${shown.join(", ")}${names.length > shown.length ? ` and ${names.length - shown.length} more (GET /api/admin/gates/templates)` : ""}`;
  }

  async create(projectId: string, input: TemplateInput, actor: Actor): Promise<GateTemplate> {
    checkText("name", input.name, TEMPLATE_NAME_MAX, true);
    checkNameChars("name", input.name);
    checkText("description", input.description ?? "", DESCRIPTION_MAX, false);
    const category = input.category ?? (input.segment === undefined ? "condition" : "segment");
    checkText("category", category, CATEGORY_MAX, true);
    if (input.segment !== undefined && input.rules !== undefined) throw validation("Give rules or a segment, not both", "segment: a template is built from rules or from a segment");
    if (input.segment === undefined && input.rules === undefined) throw validation("rules is required", "rules: the template's conditions {attr, op, value} (or segment: a segment to build it from)");
    const rules = input.segment === undefined ? checkConditions(input.rules) : [await this.segmentCondition(projectId, input.segment)];
    if (builtIn(input.name)) throw alreadyExists(`${input.name} is a built-in template`, "name: built-ins cannot be created; choose another name");
    try {
      return await this.ctx.store.write(async (tx) => {
        await this.lock(tx, projectId);
        await this.checkSegments(tx, projectId, rules, input.segment === undefined ? "rules" : "segment");
        if (await findTemplate(tx, projectId, input.name)) throw alreadyExists(`A template named ${input.name} already exists in this project`, "name: choose another name");
        const now = nowIso();
        const row: TemplateRow = { id: newId("gtpl"), name: input.name, description: input.description ?? "", category, rules: JSON.stringify(rules), created_at: now, updated_at: now };
        await insertTemplate(tx, projectId, row);
        const detail: Record<string, unknown> = { conditions: rules.length };
        if (input.segment !== undefined) detail.segment = rules[0]!.value;
        await recordAudit(tx, { projectId, action: "gate.template.create", subjectId: row.id, subjectName: row.name, actor, detail });
        return toTemplate(row);
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw alreadyExists(`A template named ${input.name} already exists in this project`, "name: choose another name");
      throw err;
    }
  }

  async update(projectId: string, idOrName: string, patch: TemplatePatch, actor: Actor): Promise<GateTemplate> {
    const fixed = builtIn(idOrName);
    if (fixed) throw readOnly(fixed);
    if (patch.name !== undefined) {
      checkText("name", patch.name, TEMPLATE_NAME_MAX, true);
      checkNameChars("name", patch.name);
    }
    if (patch.description !== undefined) checkText("description", patch.description, DESCRIPTION_MAX, false);
    if (patch.category !== undefined) checkText("category", patch.category, CATEGORY_MAX, true);
    const rules = patch.rules === undefined ? undefined : checkConditions(patch.rules);
    if (patch.name !== undefined && builtIn(patch.name)) throw alreadyExists(`${patch.name} is a built-in template`, "name: choose another name");
    try {
      return await this.ctx.store.write(async (tx) => {
        await this.lock(tx, projectId);
        if (rules !== undefined) await this.checkSegments(tx, projectId, rules, "rules");
        const current = await findTemplate(tx, projectId, idOrName);
        if (!current) throw notFound(`Gate template ${idOrName} not found`);
        if (patch.name !== undefined && patch.name !== current.name && (await findTemplate(tx, projectId, patch.name))) {
          throw alreadyExists(`A template named ${patch.name} already exists in this project`, "name: choose another name");
        }
        const next: TemplateRow = {
          ...current,
          name: patch.name ?? current.name,
          description: patch.description ?? current.description,
          category: patch.category ?? current.category,
          rules: rules === undefined ? current.rules : JSON.stringify(rules),
          updated_at: nowIso(),
        };
        await updateTemplate(tx, next);
        await recordAudit(tx, { projectId, action: "gate.template.update", subjectId: next.id, subjectName: next.name, actor, detail: { fields: Object.keys(patch) } });
        return toTemplate(next);
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw alreadyExists(`A template named ${patch.name} already exists in this project`, "name: choose another name");
      throw err;
    }
  }

  /** The project's own templates whose conditions name the segment (in_segment / not_in_segment), by name. */
  async segmentUsers(q: Queryable, projectId: string, segment: string): Promise<string[]> {
    const names: string[] = [];
    for (const row of await templatesOfProject(q, projectId)) {
      if ((JSON.parse(row.rules) as GateCondition[]).some((c) => SEGMENT_REF_OPS.includes(c.op) && c.value === segment)) names.push(row.name);
    }
    return names.sort();
  }

  /**
   * The gates' project lock, then the templates': segment writes take the gates' lock first, so a
   * segment is not deleted between the check of a template naming it and the template's write.
   */
  private async lock(tx: Tx, projectId: string): Promise<void> {
    await this.ctx.services.gates.lockProject(tx, projectId);
    await tx.lock(`gate-templates:${projectId}`);
  }

  /** Every segment the conditions name exists (VALIDATION naming the condition's value, or `segment`). */
  private async checkSegments(q: Queryable, projectId: string, rules: GateCondition[], field: "rules" | "segment"): Promise<void> {
    const refs = rules.flatMap((c, i) => (SEGMENT_REF_OPS.includes(c.op) ? [{ name: String(c.value), field: field === "segment" ? "segment" : `rules[${i}].value` }] : []));
    if (refs.length === 0) return;
    const known = await this.ctx.services.segments.costs(q, projectId, refs.map((r) => r.name));
    for (const ref of refs) if (!known.has(ref.name)) throw validation(`Segment ${ref.name} not found`, `${ref.field}: no segment named ${ref.name} in this project`);
  }

  /** The one condition of a template built from a segment (by id or name): on its attribute, naming it by name. */
  private async segmentCondition(projectId: string, segment: string): Promise<GateCondition> {
    const found = (await this.ctx.services.segments.list(projectId)).find((s) => s.id === segment || s.name === segment);
    if (!found) throw validation(`Segment ${segment} not found`, `segment: no segment named ${segment} in this project`);
    return { attr: found.attribute, op: "in_segment", value: found.name };
  }

  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    const fixed = builtIn(idOrName);
    if (fixed) throw readOnly(fixed);
    await this.ctx.store.write(async (tx) => {
      const current = await findTemplate(tx, projectId, idOrName);
      if (!current) throw notFound(`Gate template ${idOrName} not found`);
      await deleteTemplate(tx, current.id);
      await recordAudit(tx, { projectId, action: "gate.template.delete", subjectId: current.id, subjectName: current.name, actor });
    });
  }
}
