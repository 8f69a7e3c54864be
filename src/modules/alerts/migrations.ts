import type { Migration } from "../../lib/store";

/**
 * Alert rules: a metric compared with a threshold over a trailing window,
 * evaluated every minute. `state` and `last_*` are the evaluator's; the rest
 * is the rule as people set it. A rule's metric never changes (and a metric
 * in use cannot be deleted).
 */
export const ALERTS_MIGRATIONS: Migration[] = [
  {
    name: "alert_rules",
    sqlite: `
CREATE TABLE alert_rules (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  metric_id TEXT NOT NULL REFERENCES metrics(id),
  threshold REAL NOT NULL,
  comparator TEXT NOT NULL CHECK (comparator IN ('gt', 'gte', 'lt', 'lte')),
  window_hours INTEGER NOT NULL CHECK (window_hours BETWEEN 1 AND 720),
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  notify TEXT,
  state TEXT NOT NULL CHECK (state IN ('ok', 'firing')),
  last_value REAL,
  last_checked_at TEXT,
  last_transition_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;
CREATE INDEX alert_rules_metric ON alert_rules (metric_id);
`,
    postgres: `
CREATE TABLE alert_rules (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  metric_id text NOT NULL REFERENCES metrics(id),
  threshold double precision NOT NULL,
  comparator text NOT NULL CHECK (comparator IN ('gt', 'gte', 'lt', 'lte')),
  window_hours integer NOT NULL CHECK (window_hours BETWEEN 1 AND 720),
  enabled integer NOT NULL CHECK (enabled IN (0, 1)),
  notify text,
  state text NOT NULL CHECK (state IN ('ok', 'firing')),
  last_value double precision,
  last_checked_at text,
  last_transition_at text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  UNIQUE (project_id, name)
);
CREATE INDEX alert_rules_metric ON alert_rules (metric_id);
`,
  },
];
