import { recordAudit } from "../../lib/audit";
import { type Measure, type PropertyFilter, type SeriesResult } from "../../lib/eventstore/types";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Queryable } from "../../lib/store";
import { CONTROL_CHARS, checkResourceName } from "../../lib/validate";
import {
  type CatalogEntry,
  type DefinitionInput,
  DESCRIPTION_MAX,
  type MetricDefinition,
  type MetricKind,
  type MetricPart,
  NAME_MAX,
  checkAgainstCatalog,
  checkDefinition,
  compile,
  divideRows,
  referencedEvents,
} from "./compile";
import { checkSeriesWindow } from "../analytics/service";
import { type MetricRow, deleteMetric, insertMetric, metricById, metricByName, metricsByIdPrefix, metricsOfProject, updateMetric } from "./store";

export type Actor = { email: string; type: string };

/** A ratio's numerator or denominator, as the API shows it. */
export type MetricPartView = { kind: MetricPart["kind"]; event: string; property: string | null; filters: PropertyFilter[] };

export type Metric = {
  id: string;
  name: string;
  description: string | null;
  kind: MetricKind;
  /** count, sum, unique: the catalogued event measured; null for a ratio. */
  event: string | null;
  /** sum: the numeric property added up (null: the event's value). */
  property: string | null;
  filters: PropertyFilter[];
  numerator: MetricPartView | null;
  denominator: MetricPartView | null;
  createdAt: string;
  updatedAt: string;
};

type PartInput = { kind: string; event: string; property?: string | null; filters?: PropertyFilter[] | null };

export type MetricInput = {
  name: string;
  description?: string | null;
  kind: string;
  event?: string | null;
  property?: string | null;
  filters?: PropertyFilter[] | null;
  numerator?: PartInput | null;
  denominator?: PartInput | null;
};
export type MetricPatch = Partial<MetricInput>;

export type SeriesWindow = { from: number; to: number; bucket: number };

const DEFINITION_FIELDS = ["kind", "event", "property", "filters", "numerator", "denominator"] as const;

export const ACTIONS = { create: "metric.create", update: "metric.update", delete: "metric.delete" } as const;

const partView = (p: MetricPart): MetricPartView => ({ kind: p.kind, event: p.event, property: p.property ?? null, filters: p.filters });

function toMetric(row: MetricRow): Metric {
  const d = JSON.parse(row.definition) as MetricDefinition;
  const base = { id: row.id, name: row.name, description: row.description, createdAt: row.created_at, updatedAt: row.updated_at };
  return d.kind === "ratio"
    ? { ...base, kind: "ratio", event: null, property: null, filters: [], numerator: partView(d.numerator), denominator: partView(d.denominator) }
    : { ...base, kind: d.kind, event: d.event, property: d.property ?? null, filters: d.filters, numerator: null, denominator: null };
}

function definitionOf(row: MetricRow): MetricDefinition {
  return JSON.parse(row.definition) as MetricDefinition;
}

/** A stored definition as input again, for a PATCH to merge into. */
function asInput(d: MetricDefinition): DefinitionInput {
  return d.kind === "ratio" ? { kind: "ratio", numerator: d.numerator, denominator: d.denominator } : { kind: d.kind, event: d.event, property: d.property, filters: d.filters };
}

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "met_", slashReason: "'/' is not allowed in names used in paths" });
}

function checkDescription(description: string | null | undefined): void {
  if (description === undefined || description === null) return;
  if (description.length > DESCRIPTION_MAX) throw validation(`description must be at most ${DESCRIPTION_MAX} characters`, `description: ${description.length} characters`);
  if (CONTROL_CHARS.test(description.replace(/[\n\t]/g, ""))) throw validation("description must not contain control characters", "description: control characters are not allowed");
}

const duplicateName = (name: string) => alreadyExists(`A metric named ${name} already exists in this project`, "name: choose another name");

/**
 * Metrics: named measures over the project's events (a count, a sum, unique
 * units, or a ratio of two of those), checked against the event catalog when
 * saved and compiled against it again each time they run (compile.ts). The
 * series themselves come from the analytics service's event store.
 */
export class MetricsService {
  constructor(private readonly ctx: ServiceContext) {}

  async list(projectId: string, q?: string): Promise<Metric[]> {
    const metrics = (await metricsOfProject(this.ctx.store, projectId)).map(toMetric);
    return filterByQuery(metrics, q, (m) => [m.name, m.description]);
  }

  async get(projectId: string, idOrName: string): Promise<Metric> {
    return toMetric(await this.find(this.ctx.store, projectId, idOrName));
  }

  /** Whether the metric exists in the project (id, unique id prefix or name); its id. */
  async resolveId(projectId: string, idOrName: string, q: Queryable = this.ctx.store): Promise<string | undefined> {
    try {
      return (await this.find(q, projectId, idOrName)).id;
    } catch {
      return undefined;
    }
  }

  async create(projectId: string, input: MetricInput, actor: Actor): Promise<Metric> {
    checkName(input.name);
    checkDescription(input.description);
    const definition = checkDefinition(input);
    checkAgainstCatalog(definition, await this.catalogFor(projectId, definition));
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        if (await metricByName(tx, projectId, input.name)) throw duplicateName(input.name);
        const now = nowIso();
        const row: MetricRow = {
          id: newId("met"),
          name: input.name,
          description: input.description ?? null,
          kind: definition.kind,
          definition: JSON.stringify(definition),
          created_at: now,
          updated_at: now,
        };
        await insertMetric(tx, projectId, row);
        await recordAudit(tx, { projectId, action: ACTIONS.create, subjectId: row.id, subjectName: row.name, actor, detail: { kind: row.kind, events: referencedEvents(definition) } });
        return toMetric(row);
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(input.name);
      throw err;
    }
  }

  /**
   * A partial update: the fields sent replace the stored ones (null clears
   * description and property). Sending another `kind` starts the definition
   * afresh from the fields sent. Every PATCH checks the whole definition
   * again against today's catalog (so an empty one says what no longer
   * compiles), and a metric that no longer compiled compiles again once
   * saved.
   */
  async update(projectId: string, idOrName: string, patch: MetricPatch, actor: Actor): Promise<Metric> {
    if (patch.name !== undefined) checkName(patch.name);
    checkDescription(patch.description);
    const current = await this.find(this.ctx.store, projectId, idOrName);
    const definition = this.mergedDefinition(definitionOf(current), patch);
    checkAgainstCatalog(definition, await this.catalogFor(projectId, definition));
    const name = patch.name ?? current.name;
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        const row = await this.find(tx, projectId, current.id);
        if (name !== row.name && (await metricByName(tx, projectId, name))) throw duplicateName(name);
        const next: MetricRow = {
          ...row,
          name,
          description: patch.description === undefined ? row.description : patch.description,
          kind: definition.kind,
          definition: JSON.stringify(definition),
          updated_at: nowIso(),
        };
        await updateMetric(tx, next);
        await recordAudit(tx, { projectId, action: ACTIONS.update, subjectId: row.id, subjectName: next.name, actor, detail: { fields: Object.keys(patch) } });
        return toMetric(next);
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw duplicateName(name);
      throw err;
    }
  }

  /**
   * Deletes a metric no alert rule uses. A rule's metric is fixed for its
   * life, so a metric in use is refused (400 VALIDATION naming the rules)
   * until those rules are deleted (in the dashboard).
   */
  async remove(projectId: string, idOrName: string, actor: Actor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      // Alert rules are created under this lock too: none can start using the metric meanwhile.
      await tx.lock(lockScope(projectId));
      const row = await this.find(tx, projectId, idOrName);
      const rules = await this.ctx.services.alerts.rulesUsingMetric(tx, projectId, row.id);
      if (rules.length > 0) {
        throw validation(
          `Metric ${row.name} is used by alert rule ${rules.join(", ")}; delete those rules first (alert rules are deleted in the dashboard)`,
          `id: used by alert rule${rules.length > 1 ? "s" : ""} ${rules.join(", ")}`,
        );
      }
      // Rollouts name their watched metrics under this lock too.
      const rollouts = await this.ctx.services.rollouts.metricUsers(tx, projectId, row.id);
      if (rollouts.length > 0) {
        throw validation(
          `Metric ${row.name} is watched by unfinished rollout ${rollouts.join(", ")}; roll them back or let them complete first`,
          `id: watched by rollout${rollouts.length > 1 ? "s" : ""} ${rollouts.join(", ")}`,
        );
      }
      const experiments = await this.ctx.services.experiments.metricUsers(tx, projectId, row.id);
      if (experiments.length > 0) {
        throw validation(
          `Metric ${row.name} is measured by experiment ${experiments.join(", ")}; remove it from them or stop them first`,
          `id: measured by experiment${experiments.length > 1 ? "s" : ""} ${experiments.join(", ")}`,
        );
      }
      await deleteMetric(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.delete, subjectId: row.id, subjectName: row.name, actor });
    });
  }

  /**
   * The metric's series over [from, to) in buckets of `bucket` seconds. A
   * ratio runs its numerator's and denominator's series and divides bucket
   * by bucket (0 where the denominator is 0); `sql` is then both statements.
   * 422 when the stored definition no longer compiles; 502/503 from the
   * analytics upstream pass through.
   */
  async series(projectId: string, idOrName: string, window: SeriesWindow): Promise<SeriesResult> {
    checkSeriesWindow(window);
    const row = await this.find(this.ctx.store, projectId, idOrName);
    return this.run(projectId, row, window);
  }

  /**
   * The metric's value over [from, to) (epoch seconds) as one bucket: what
   * alert rules compare. Same errors as `series`.
   */
  async valueOver(projectId: string, metricId: string, from: number, to: number): Promise<number> {
    const row = await this.find(this.ctx.store, projectId, metricId);
    const result = await this.run(projectId, row, { from, to, bucket: to - from });
    return result.rows.reduce((sum, r) => sum + r.v, 0);
  }

  /** The measures a stored metric compiles to today (422 when it no longer does). */
  async compiled(projectId: string, idOrName: string): Promise<Measure[]> {
    const row = await this.find(this.ctx.store, projectId, idOrName);
    const definition = definitionOf(row);
    return compile(row.name, definition, await this.catalogFor(projectId, definition));
  }

  private async run(projectId: string, row: MetricRow, window: SeriesWindow): Promise<SeriesResult> {
    const definition = definitionOf(row);
    const measures = compile(row.name, definition, await this.catalogFor(projectId, definition));
    const { analytics } = this.ctx.services;
    const results = await Promise.all(measures.map((measure) => analytics.series({ projectId, ...window, measure })));
    if (results.length === 1) return results[0]!;
    const [numerator, denominator] = results as [SeriesResult, SeriesResult];
    return { sql: `${numerator.sql};\n${denominator.sql}`, rows: divideRows(numerator.rows, denominator.rows) };
  }

  private mergedDefinition(current: MetricDefinition, patch: MetricPatch): MetricDefinition {
    const touched = DEFINITION_FIELDS.filter((f) => patch[f] !== undefined);
    if (touched.length === 0) return checkDefinition(asInput(current));
    const kind = patch.kind ?? current.kind;
    // Another kind: a new definition from the fields sent (a count's event means nothing to a ratio).
    const base: DefinitionInput = kind === current.kind ? asInput(current) : { kind };
    const merged: DefinitionInput = { ...base, kind };
    for (const f of DEFINITION_FIELDS) if (f !== "kind" && patch[f] !== undefined) (merged as Record<string, unknown>)[f] = patch[f];
    return checkDefinition(merged);
  }

  private async catalogFor(projectId: string, definition: MetricDefinition): Promise<(event: string) => CatalogEntry | undefined> {
    const entries = new Map<string, CatalogEntry | undefined>();
    for (const name of referencedEvents(definition)) entries.set(name, await this.ctx.services.events.findByName(projectId, name));
    return (event) => entries.get(event);
  }

  /** By id, else by exact name, else by a unique id prefix (`met_` and at least one more character). */
  private async find(q: Queryable, projectId: string, idOrName: string): Promise<MetricRow> {
    const row = (await metricById(q, projectId, idOrName)) ?? (await metricByName(q, projectId, idOrName));
    if (row) return row;
    if (idOrName.startsWith("met_") && idOrName.length > 4) {
      const rows = await metricsByIdPrefix(q, projectId, idOrName);
      if (rows.length === 1) return rows[0]!;
      if (rows.length > 1) throw notFound(`Metric id prefix ${idOrName} matches several metrics`, "id: give more of the id, or the name");
    }
    throw notFound(`Metric ${idOrName} not found`);
  }
}

/** The one lock of a project's metrics: every metric write, and alert rules as they are created (they name a metric). */
export function lockScope(projectId: string): string {
  return `metrics:${projectId}`;
}
