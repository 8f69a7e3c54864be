import type { Migration } from "../../lib/store";

/**
 * Metric definitions: what to measure over the event store (count, sum,
 * unique units, or a ratio of two of those), named in the project. The
 * definition is stored as JSON as it was checked when saved; it is compiled
 * against the event catalog each time it runs.
 */
export const METRICS_MIGRATIONS: Migration[] = [
  {
    name: "metrics",
    sqlite: `
CREATE TABLE metrics (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('count', 'sum', 'unique', 'ratio')),
  definition TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;
`,
    postgres: `
CREATE TABLE metrics (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  kind text NOT NULL CHECK (kind IN ('count', 'sum', 'unique', 'ratio')),
  definition text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  UNIQUE (project_id, name)
);
`,
  },
];
