import { recordAudit } from "../../lib/audit";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { checkOptionalText } from "../../lib/validate";
import { type AttributeRow, attributesOfProject, findAttribute, insertAttribute, updateAttribute, upsertSeen } from "./store";

export const ATTRIBUTE_TYPES = ["string", "number", "boolean", "enum", "semver", "date"] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

export type Attribute = {
  id: string;
  name: string;
  type: string;
  enumValues: string[] | null;
  required: 0 | 1;
  description: string | null;
  sdkPath: string | null;
  createdAt: string;
  lastSeenAt: string | null;
  source: "manual" | "auto";
  deprecated: 0 | 1;
};

export type AttributeInput = { name: string; type: AttributeType; enumValues?: string[] | null; required?: boolean; description?: string | null; sdkPath?: string | null };
export type AttributePatch = Partial<Omit<AttributeInput, "name">> & { deprecated?: boolean };

const NAME = /^[A-Za-z0-9_.:$-]{1,128}$/;
/** Context keys that are not attributes of the unit. */
const NOT_ATTRIBUTES = new Set(["env", "targetingKey"]);
/** A project holds at most this many auto attributes: a client sending random keys cannot grow the table without bound. */
const AUTO_MAX_PER_PROJECT = 1000;

function toAttribute(r: AttributeRow): Attribute {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    enumValues: r.enum_values === null ? null : JSON.parse(r.enum_values),
    required: Number(r.required) === 1 ? 1 : 0,
    description: r.description,
    sdkPath: r.sdk_path,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    source: r.source,
    deprecated: Number(r.deprecated) === 1 ? 1 : 0,
  };
}

function typeOfValue(value: unknown): AttributeType {
  return typeof value === "number" ? "number" : typeof value === "boolean" ? "boolean" : "string";
}

function checkEnum(type: string, enumValues: string[] | null | undefined): void {
  if (type === "enum" && (!enumValues || enumValues.length === 0)) throw validation("An enum attribute lists its values", "enumValues: a non-empty list of strings when type is enum");
  if (type !== "enum" && enumValues && enumValues.length > 0) throw validation("Only an enum attribute lists values", "enumValues: only with type enum");
}

/**
 * The attributes gates target. People declare them (manual: type, enum
 * values, description, where the SDK finds them) and deprecate them; the
 * server also records every attribute it sees in evaluation contexts
 * (auto). Seen names are buffered in memory and written every few seconds
 * in one transaction per flush, so an evaluation never writes.
 */
export class AttributesService {
  /** projectId → name → [type, last seen (ms)] since the last flush. */
  private seen = new Map<string, Map<string, [AttributeType, number]>>();
  /** projectId → the names browser keys reported in the current day window (see noteContext). */
  private readonly browserNames = new Map<string, { until: number; names: Set<string> }>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly ctx: ServiceContext) {
    this.timer = setInterval(() => void this.flush(), ctx.options.attributesFlushMs ?? 10_000);
    this.timer.unref?.();
  }

  async list(projectId: string, q?: string): Promise<Attribute[]> {
    const rows = (await attributesOfProject(this.ctx.store, projectId)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return filterByQuery(rows.map(toAttribute), q, (a) => [a.name, a.description]);
  }

  async get(projectId: string, idOrName: string): Promise<Attribute> {
    const row = await findAttribute(this.ctx.store, projectId, idOrName);
    if (!row) throw notFound(`Attribute ${idOrName} not found`);
    return toAttribute(row);
  }

  async create(projectId: string, input: AttributeInput, actor: { email: string; type: string }): Promise<Attribute> {
    if (!NAME.test(input.name)) throw validation("Invalid attribute name", "name: 1 to 128 letters, digits, _ . : $ or -");
    checkEnum(input.type, input.enumValues);
    checkOptionalText("description", input.description, 1000);
    checkOptionalText("sdkPath", input.sdkPath, 256);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(`attributes:${projectId}`);
        const existing = await findAttribute(tx, projectId, input.name);
        const row: AttributeRow = {
          id: existing?.id ?? newId("attr"),
          name: input.name,
          type: input.type,
          enum_values: input.enumValues?.length ? JSON.stringify(input.enumValues) : null,
          required: input.required ? 1 : 0,
          description: input.description ?? null,
          sdk_path: input.sdkPath ?? null,
          source: "manual",
          deprecated: 0,
          created_at: existing?.created_at ?? nowIso(),
          last_seen_at: existing?.last_seen_at ?? null,
        };
        // An attribute only seen so far becomes a declared one; a declared one exists already.
        if (existing && existing.source === "manual") throw alreadyExists(`An attribute named ${input.name} already exists`, "name: update it instead (PATCH)");
        if (existing) await updateAttribute(tx, row);
        else await insertAttribute(tx, projectId, row);
        await recordAudit(tx, { projectId, action: "attribute.create", subjectId: row.id, subjectName: row.name, actor, detail: { type: row.type } });
        return toAttribute(row);
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw alreadyExists(`An attribute named ${input.name} already exists`, "name: update it instead (PATCH)");
      throw err;
    }
  }

  async update(projectId: string, idOrName: string, patch: AttributePatch, actor: { email: string; type: string }): Promise<Attribute> {
    checkOptionalText("description", patch.description, 1000);
    checkOptionalText("sdkPath", patch.sdkPath, 256);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(`attributes:${projectId}`);
      const current = await findAttribute(tx, projectId, idOrName);
      if (!current) throw notFound(`Attribute ${idOrName} not found`);
      const type = patch.type ?? current.type;
      const enumValues = patch.enumValues !== undefined ? patch.enumValues : current.enum_values === null ? null : (JSON.parse(current.enum_values) as string[]);
      checkEnum(type, enumValues);
      const next: AttributeRow = {
        ...current,
        type,
        enum_values: enumValues?.length ? JSON.stringify(enumValues) : null,
        required: patch.required === undefined ? current.required : patch.required ? 1 : 0,
        description: patch.description === undefined ? current.description : patch.description,
        sdk_path: patch.sdkPath === undefined ? current.sdk_path : patch.sdkPath,
        deprecated: patch.deprecated === undefined ? current.deprecated : patch.deprecated ? 1 : 0,
        // Editing an attribute declares it.
        source: "manual",
      };
      await updateAttribute(tx, next);
      const action = patch.deprecated === true ? "attribute.deprecate" : "attribute.update";
      await recordAudit(tx, { projectId, action, subjectId: next.id, subjectName: next.name, actor, detail: { fields: Object.keys(patch) } });
      return toAttribute(next);
    });
  }

  /**
   * Notes the attributes of one evaluation context (memory only; written by the next flush). `fromBrowser`: sent
   * with a browser key, whose contexts may report at most `newAttributesPerDay` distinct names a project a day
   * (per server): an app anyone can run cannot fill the project's attributes with made-up names.
   */
  noteContext(projectId: string, context: Record<string, unknown>, fromBrowser = false): void {
    let names = this.seen.get(projectId);
    const now = Date.now();
    let browser: { until: number; names: Set<string> } | undefined;
    if (fromBrowser) {
      browser = this.browserNames.get(projectId);
      if (!browser || browser.until <= now) this.browserNames.set(projectId, (browser = { until: now + 86_400_000, names: new Set() }));
    }
    for (const [name, value] of Object.entries(context)) {
      if (NOT_ATTRIBUTES.has(name) || value === null || value === undefined || typeof value === "object" || !NAME.test(name)) continue;
      if (browser && !browser.names.has(name)) {
        if (browser.names.size >= this.ctx.services.keys.browserLimits.newAttributesPerDay) continue;
        browser.names.add(name);
      }
      if (!names) this.seen.set(projectId, (names = new Map()));
      if (names.size >= AUTO_MAX_PER_PROJECT && !names.has(name)) continue;
      names.set(name, [typeOfValue(value), now]);
    }
  }

  /** Writes what was seen since the last flush; a failure keeps nothing back from the next one (it is only a last-seen time). */
  async flush(): Promise<void> {
    if (this.seen.size === 0) return;
    const batch = this.seen;
    this.seen = new Map();
    for (const [projectId, names] of batch) {
      try {
        await this.ctx.store.write(async (tx) => {
          const known = await attributesOfProject(tx, projectId);
          let autos = known.filter((a) => a.source === "auto").length;
          const byName = new Set(known.map((a) => a.name));
          for (const [name, [type, at]] of names) {
            if (!byName.has(name) && autos >= AUTO_MAX_PER_PROJECT) continue;
            if (!byName.has(name)) autos++;
            await upsertSeen(tx, projectId, { id: newId("attr"), name, type, at: new Date(at).toISOString() });
          }
        });
      } catch (err) {
        this.ctx.log.warn("recording seen attributes failed", { projectId, error: String(err) });
      }
    }
  }

  /** Warnings for rules that name attributes nobody declared or saw, or deprecated ones. */
  async warningsFor(projectId: string, attrs: { name: string; field: string }[]): Promise<string[]> {
    if (attrs.length === 0) return [];
    const known = new Map((await attributesOfProject(this.ctx.store, projectId)).map((a) => [a.name, a]));
    const warnings: string[] = [];
    for (const { name, field } of attrs) {
      const a = known.get(name);
      if (!a) warnings.push(`${field}: attribute ${name} is unknown (not declared, not yet seen in an evaluation context)`);
      else if (Number(a.deprecated) === 1) warnings.push(`${field}: attribute ${name} is deprecated`);
    }
    return warnings;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
