import { type Queryable, rowsByIdPrefix } from "../../lib/store";
import type { Env } from "../../lib/envs";
import type { Guardrail, Variant } from "./checks";
import type { Experiment, ExperimentStatus, Outcome } from "./types";

// The experiments module's own queries (both engines).

export type ExperimentRow = {
  id: string;
  universe_id: string;
  name: string;
  description: string | null;
  env: string;
  status: string;
  /** JSON: the variants, control first. */
  variants: string;
  allocation_start: number;
  allocation_end: number;
  gate: string | null;
  primary_metric_id: string | null;
  /** JSON: `[{metric: id, worseWhen}]`. */
  guardrail_metric_ids: string;
  salt: string;
  started_at: string | null;
  stopped_at: string | null;
  /** JSON, or null while not stopped. */
  outcome: string | null;
  created_at: string;
  updated_at: string;
};

const FIELDS = [
  "id",
  "universe_id",
  "name",
  "description",
  "env",
  "status",
  "variants",
  "allocation_start",
  "allocation_end",
  "gate",
  "primary_metric_id",
  "guardrail_metric_ids",
  "salt",
  "started_at",
  "stopped_at",
  "outcome",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof ExperimentRow)[];
const COLUMNS = FIELDS.join(", ");

export async function experimentsOfProject(q: Queryable, projectId: string): Promise<ExperimentRow[]> {
  return q.all<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE project_id = ? ORDER BY name`, projectId);
}

export async function experimentById(q: Queryable, projectId: string, id: string): Promise<ExperimentRow | undefined> {
  return q.one<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE id = ? AND project_id = ?`, id, projectId);
}

export async function experimentByName(q: Queryable, projectId: string, name: string): Promise<ExperimentRow | undefined> {
  return q.one<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE name = ? AND project_id = ?`, name, projectId);
}

/** Up to two experiments whose id starts with `prefix`. */
export async function experimentsByIdPrefix(q: Queryable, projectId: string, prefix: string): Promise<ExperimentRow[]> {
  return rowsByIdPrefix<ExperimentRow>(q, "experiments", COLUMNS, projectId, prefix);
}

/** The running experiments of one universe (the start's overlap check, the universe's in-use check). */
export async function runningInUniverse(q: Queryable, universeId: string): Promise<ExperimentRow[]> {
  return q.all<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE universe_id = ? AND status = 'running' ORDER BY allocation_start`, universeId);
}

/** Running experiments of one project's env (the snapshot). */
export async function runningOnEnv(q: Queryable, projectId: string, env: string): Promise<ExperimentRow[]> {
  return q.all<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE project_id = ? AND env = ? AND status = 'running' ORDER BY name`, projectId, env);
}

/** Every running experiment of every project (the auto-rollback round). */
export async function allRunning(q: Queryable): Promise<(ExperimentRow & { project_id: string })[]> {
  return q.all<ExperimentRow & { project_id: string }>(`SELECT ${COLUMNS}, project_id FROM experiments WHERE status = 'running' ORDER BY project_id, name`);
}

/** What an unfinished experiment may refer to: a metric (by id) it measures, a gate it targets or overrides, a config it overrides. */
export type ExperimentReference = { kind: "metric"; id: string } | { kind: "gate" | "config"; name: string };

/** Names of the project's experiments (not stopped) that refer to `ref`: what refuses the deletion of a metric, gate or config. */
export async function experimentsUsing(q: Queryable, projectId: string, ref: ExperimentReference): Promise<string[]> {
  const rows = await q.all<{ name: string; gate: string | null; variants: string; primary_metric_id: string | null; guardrail_metric_ids: string }>(
    "SELECT name, gate, variants, primary_metric_id, guardrail_metric_ids FROM experiments WHERE project_id = ? AND status <> 'stopped' ORDER BY name",
    projectId,
  );
  const uses = (r: (typeof rows)[number]): boolean => {
    if (ref.kind === "metric") return r.primary_metric_id === ref.id || (JSON.parse(r.guardrail_metric_ids) as { metric: string }[]).some((g) => g.metric === ref.id);
    if (ref.kind === "gate" && r.gate === ref.name) return true;
    return (JSON.parse(r.variants) as { override?: { kind: string; name: string } }[]).some((v) => v.override?.kind === ref.kind && v.override.name === ref.name);
  };
  return rows.filter(uses).map((r) => r.name);
}

export async function insertExperiment(q: Queryable, projectId: string, row: ExperimentRow): Promise<void> {
  await q.run(`INSERT INTO experiments (${COLUMNS}, project_id) VALUES (${FIELDS.map(() => "?").join(", ")}, ?)`, ...FIELDS.map((f) => row[f]), projectId);
}

/** Writes every field but the id, the creation time and the salt (fixed for the experiment's life). */
export async function updateExperiment(q: Queryable, row: ExperimentRow): Promise<void> {
  const changing = FIELDS.filter((f) => f !== "id" && f !== "salt" && f !== "created_at");
  await q.run(`UPDATE experiments SET ${changing.map((f) => `${f} = ?`).join(", ")} WHERE id = ?`, ...changing.map((f) => row[f]), row.id);
}

export async function deleteExperiment(q: Queryable, id: string): Promise<void> {
  await q.run("DELETE FROM experiments WHERE id = ?", id);
}

/** One treatment's sequential state under a basis (see looks.ts). */
export type LookRow = { variant: string; basis: string; p_value: number; cs_low: number; cs_high: number; tau2: number; looks: number };

export async function looksOf(q: Queryable, experimentId: string, metricId: string): Promise<LookRow[]> {
  const rows = await q.all<LookRow>("SELECT variant, basis, p_value, cs_low, cs_high, tau2, looks FROM experiment_looks WHERE experiment_id = ? AND metric_id = ?", experimentId, metricId);
  return rows.map((r) => ({ ...r, p_value: Number(r.p_value), cs_low: Number(r.cs_low), cs_high: Number(r.cs_high), tau2: Number(r.tau2), looks: Number(r.looks) }));
}

export async function saveLook(q: Queryable, experimentId: string, metricId: string, look: LookRow, at: string): Promise<void> {
  await q.run(
    `INSERT INTO experiment_looks (experiment_id, metric_id, variant, basis, p_value, cs_low, cs_high, tau2, looks, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
     ON CONFLICT (experiment_id, metric_id, variant) DO UPDATE SET basis = ?4, p_value = ?5, cs_low = ?6, cs_high = ?7, tau2 = ?8, looks = ?9, updated_at = ?10`,
    experimentId,
    metricId,
    look.variant,
    look.basis,
    look.p_value,
    look.cs_low,
    look.cs_high,
    look.tau2,
    look.looks,
    at,
  );
}

/** A stored row as the API shows it (`universeName` is read from the universe). */
export function toExperiment(r: ExperimentRow, universeName: string): Experiment {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    universe: universeName,
    universeId: r.universe_id,
    env: r.env as Env,
    status: r.status as ExperimentStatus,
    variants: JSON.parse(r.variants) as Variant[],
    allocation: [Number(r.allocation_start), Number(r.allocation_end)],
    gate: r.gate,
    primaryMetric: r.primary_metric_id,
    guardrailMetrics: JSON.parse(r.guardrail_metric_ids) as Guardrail[],
    salt: r.salt,
    startedAt: r.started_at,
    stoppedAt: r.stopped_at,
    outcome: r.outcome === null ? null : (JSON.parse(r.outcome) as Outcome),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
