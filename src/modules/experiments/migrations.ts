import type { Migration } from "../../lib/store";

/**
 * Experiments: one row each. Variants, guardrails and the outcome are JSON
 * (read and written whole, never queried inside); the allocation is two
 * integers so that the overlap check of a start is plain SQL. The salt of
 * the variant split never changes.
 */
export const EXPERIMENTS_MIGRATIONS: Migration[] = [
  {
    name: "experiments",
    sqlite: `
CREATE TABLE experiments (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  universe_id TEXT NOT NULL REFERENCES universes(id),
  name TEXT NOT NULL,
  description TEXT,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  status TEXT NOT NULL CHECK (status IN ('draft', 'running', 'stopped')),
  variants TEXT NOT NULL,
  allocation_start INTEGER NOT NULL,
  allocation_end INTEGER NOT NULL,
  gate TEXT,
  primary_metric_id TEXT,
  guardrail_metric_ids TEXT NOT NULL,
  salt TEXT NOT NULL,
  started_at TEXT,
  stopped_at TEXT,
  outcome TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK (allocation_start >= 0 AND allocation_start < allocation_end AND allocation_end <= 10000),
  UNIQUE (project_id, name)
) STRICT;
CREATE INDEX experiments_by_universe ON experiments (universe_id, status);
`,
    postgres: `
CREATE TABLE experiments (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  universe_id text NOT NULL REFERENCES universes(id),
  name text NOT NULL,
  description text,
  env text NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  status text NOT NULL CHECK (status IN ('draft', 'running', 'stopped')),
  variants text NOT NULL,
  allocation_start integer NOT NULL,
  allocation_end integer NOT NULL,
  gate text,
  primary_metric_id text,
  guardrail_metric_ids text NOT NULL,
  salt text NOT NULL,
  started_at text,
  stopped_at text,
  outcome text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  CHECK (allocation_start >= 0 AND allocation_start < allocation_end AND allocation_end <= 10000),
  UNIQUE (project_id, name)
);
CREATE INDEX experiments_by_universe ON experiments (universe_id, status);
`,
  },
  /**
   * The always-valid test's memory between looks (see looks.ts): per experiment, metric and treatment, the
   * smallest p-value and the narrowest confidence sequence any look has shown, and the mixing variance of the first,
   * under one basis (the metric's definition, the test and the settings it was read with). Derived state, like the
   * rollouts' checks: kept by the analysis, never audited.
   */
  {
    name: "experiment_looks",
    sqlite: `
CREATE TABLE experiment_looks (
  experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  metric_id TEXT NOT NULL,
  variant TEXT NOT NULL,
  basis TEXT NOT NULL,
  p_value REAL NOT NULL,
  cs_low REAL NOT NULL,
  cs_high REAL NOT NULL,
  tau2 REAL NOT NULL,
  looks INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (experiment_id, metric_id, variant)
) STRICT, WITHOUT ROWID;
`,
    postgres: `
CREATE TABLE experiment_looks (
  experiment_id text NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  metric_id text NOT NULL,
  variant text NOT NULL,
  basis text NOT NULL,
  p_value double precision NOT NULL,
  cs_low double precision NOT NULL,
  cs_high double precision NOT NULL,
  tau2 double precision NOT NULL,
  looks integer NOT NULL,
  updated_at text NOT NULL,
  PRIMARY KEY (experiment_id, metric_id, variant)
);
`,
  },
];
