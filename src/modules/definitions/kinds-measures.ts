import { validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import type { Entry, Kind } from "./types";

// The definitions document's sections of measurement (issue 31): the event catalog, metrics, alert rules
// and experiments. References are by name (a metric's event, an alert's metric, an experiment's universe,
// gate and metrics); what holds ids or secrets (an alert's notification target, an experiment's status
// and results) stays out, and apply leaves it as it is.

function fail(at: string, message: string): never {
  throw validation(`Invalid definitions document: ${message}`, `${at}: ${message}`);
}

function only(raw: Record<string, unknown>, fields: string[], at: string): void {
  const extra = Object.keys(raw).filter((k) => !fields.includes(k));
  if (extra.length > 0) fail(`${at}.${extra[0]}`, `unknown field (one of ${fields.join(", ")})`);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const byName = (a: Entry, b: Entry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const changed = (current: Entry, next: Entry, fields: readonly string[]) => Object.fromEntries(fields.filter((f) => !same(current[f], next[f])).map((f) => [f, next[f]]));

async function metricNames(ctx: ServiceContext, projectId: string): Promise<Map<string, string>> {
  return new Map((await ctx.services.metrics.list(projectId)).map((m) => [m.id, m.name]));
}

const EVENT_FIELDS = ["folder", "description", "properties"] as const;

export const events: Kind = {
  section: "events",
  async export(ctx, projectId) {
    // Catalogued ones: names only seen in traffic and not yet approved are not definitions.
    return (await ctx.services.events.list(projectId))
      .filter((e) => e.pending === 0)
      .map((e) => ({ name: e.name, folder: e.folder, description: e.description, properties: e.properties.map((p) => ({ ...p })) }))
      .sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", ...EVENT_FIELDS], at);
    return { name: raw.name as string, folder: (raw.folder as string) ?? "", description: (raw.description as string) ?? "", properties: (raw.properties as unknown[]) ?? [] };
  },
  async apply(ctx, projectId, current, next, actor) {
    const input = { folder: next.folder as string, description: next.description as string, properties: next.properties as never };
    if (!current) {
      const existing = await ctx.services.events.findByName(projectId, next.name);
      if (existing) await ctx.services.events.update(projectId, next.name, input, actor);
      else await ctx.services.events.create(projectId, { name: next.name, ...input }, actor);
    } else if (Object.keys(changed(current, next, EVENT_FIELDS)).length > 0) await ctx.services.events.update(projectId, next.name, input, actor);
  },
  remove: (ctx, projectId, name, actor) => ctx.services.events.remove(projectId, name, actor),
};

const METRIC_FIELDS = ["description", "kind", "event", "property", "filters", "numerator", "denominator"] as const;

export const metrics: Kind = {
  section: "metrics",
  async export(ctx, projectId) {
    return (await ctx.services.metrics.list(projectId))
      .map((m) => ({ name: m.name, description: m.description ?? "", kind: m.kind, event: m.event, property: m.property, filters: m.filters, numerator: m.numerator, denominator: m.denominator }))
      .sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", ...METRIC_FIELDS], at);
    if (typeof raw.kind !== "string") fail(`${at}.kind`, "count, sum, unique or ratio");
    return {
      name: raw.name as string,
      description: (raw.description as string) ?? "",
      kind: raw.kind,
      event: raw.event ?? null,
      property: raw.property ?? null,
      filters: raw.filters ?? [],
      numerator: raw.numerator ?? null,
      denominator: raw.denominator ?? null,
    };
  },
  async apply(ctx, projectId, current, next, actor) {
    const input = Object.fromEntries(METRIC_FIELDS.map((f) => [f, next[f]])) as never;
    if (!current) await ctx.services.metrics.create(projectId, { name: next.name, ...(input as object) } as never, actor);
    else {
      const patch = changed(current, next, METRIC_FIELDS);
      if (Object.keys(patch).length > 0) await ctx.services.metrics.update(projectId, next.name, patch as never, actor);
    }
  },
  remove: (ctx, projectId, name, actor) => ctx.services.metrics.remove(projectId, name, actor),
};

const ALERT_FIELDS = ["threshold", "comparator", "windowHours", "enabled"] as const;

export const alerts: Kind = {
  section: "alerts",
  async export(ctx, projectId) {
    const names = await metricNames(ctx, projectId);
    return (await ctx.services.alerts.list(projectId))
      .map((a) => ({ name: a.name, metric: names.get(a.metricId) ?? a.metricId, threshold: a.threshold, comparator: a.comparator, windowHours: a.windowHours, enabled: a.enabled }))
      .sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", "metric", ...ALERT_FIELDS], at);
    if (typeof raw.metric !== "string") fail(`${at}.metric`, "the metric's name");
    return { name: raw.name as string, metric: raw.metric, threshold: raw.threshold, comparator: raw.comparator, windowHours: raw.windowHours ?? 1, enabled: raw.enabled ?? true };
  },
  async apply(ctx, projectId, current, next, actor) {
    const a = ctx.services.alerts;
    const input = { threshold: next.threshold as number, comparator: next.comparator as never, windowHours: next.windowHours as number, enabled: next.enabled as boolean };
    // An alert's metric never changes (IMMUTABLE_FIELD): another metric is another rule.
    if (current && current.metric !== next.metric) {
      await a.remove(projectId, next.name, actor, false);
      current = undefined;
    }
    if (!current) {
      const metricId = await ctx.services.metrics.resolveId(projectId, next.metric as string);
      if (!metricId) throw validation(`Metric ${String(next.metric)} not found`, `alerts: ${next.name}.metric: no metric named ${String(next.metric)}`);
      await a.create(projectId, { name: next.name, metricId, ...input }, actor);
    } else if (Object.keys(changed(current, next, ALERT_FIELDS)).length > 0) await a.update(projectId, next.name, input, actor);
  },
  remove: (ctx, projectId, name, actor) => ctx.services.alerts.remove(projectId, name, actor, false),
};

const EXPERIMENT_FIELDS = ["description", "universe", "env", "variants", "allocation", "gate", "primaryMetric", "guardrailMetrics"] as const;

export const experiments: Kind = {
  section: "experiments",
  async export(ctx, projectId) {
    const names = await metricNames(ctx, projectId);
    return (await ctx.services.experiments.list(projectId))
      .map((e) => ({
        name: e.name,
        description: e.description ?? "",
        universe: e.universe,
        env: e.env,
        variants: e.variants.map((v) => ({ ...v })),
        allocation: e.allocation,
        gate: e.gate,
        primaryMetric: e.primaryMetric === null ? null : (names.get(e.primaryMetric) ?? e.primaryMetric),
        guardrailMetrics: e.guardrailMetrics.map((g) => ({ metric: names.get(g.metric) ?? g.metric, worseWhen: g.worseWhen })),
      }))
      .sort(byName);
  },
  normalize(raw, at) {
    only(raw, ["name", ...EXPERIMENT_FIELDS], at);
    if (typeof raw.universe !== "string") fail(`${at}.universe`, "the universe's name");
    if (!Array.isArray(raw.variants)) fail(`${at}.variants`, "a list of variants");
    return {
      name: raw.name as string,
      description: (raw.description as string) ?? "",
      universe: raw.universe,
      env: raw.env ?? "prod",
      variants: (raw.variants as Record<string, unknown>[]).map((v) => ({ ...v, name: v.name ?? v.key, value: v.value ?? null })),
      allocation: raw.allocation,
      gate: raw.gate ?? null,
      primaryMetric: raw.primaryMetric ?? null,
      guardrailMetrics: ((raw.guardrailMetrics as unknown[]) ?? []).map((g) => (typeof g === "string" ? { metric: g, worseWhen: "decrease" } : g)),
    };
  },
  async apply(ctx, projectId, current, next, actor) {
    const input = Object.fromEntries(EXPERIMENT_FIELDS.map((f) => [f, next[f]])) as Record<string, unknown>;
    if (!current) await ctx.services.experiments.create(projectId, { name: next.name, ...input } as never, actor);
    else {
      // A running experiment keeps its split and a stopped one its design: the service refuses those, naming the field.
      const patch = changed(current, next, EXPERIMENT_FIELDS);
      if (Object.keys(patch).length > 0) await ctx.services.experiments.update(projectId, next.name, patch as never, actor);
    }
  },
  remove: (ctx, projectId, name, actor) => ctx.services.experiments.remove(projectId, name, actor),
};
