import type { Migration } from "../../lib/store";

/**
 * Scheduled changes: one row per schedule, one per step (a single change is a schedule of one step). The
 * change is JSON (src/lib/changes.ts `{kind, ...body}`), read and written whole; times are ISO text in UTC
 * (`toISOString`), which sorts as it reads. The partial index finds due steps without reading finished ones.
 */
export const SCHEDULES_MIGRATIONS: Migration[] = [
  {
    name: "schedules",
    sqlite: `
CREATE TABLE schedules (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'cancelled')),
  summary TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX schedules_by_project ON schedules (project_id, created_at);
CREATE TABLE schedule_steps (
  schedule_id TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  project_id TEXT NOT NULL,
  change TEXT NOT NULL,
  summary TEXT NOT NULL,
  run_at TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'cancelled')),
  ran_at TEXT,
  late_by_ms INTEGER,
  late INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  PRIMARY KEY (schedule_id, step)
) STRICT;
CREATE INDEX schedule_steps_due ON schedule_steps (run_at) WHERE state = 'pending';
`,
    postgres: `
CREATE TABLE schedules (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  state text NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'cancelled')),
  summary text NOT NULL,
  created_by text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE INDEX schedules_by_project ON schedules (project_id, created_at);
CREATE TABLE schedule_steps (
  schedule_id text NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  step integer NOT NULL,
  project_id text NOT NULL,
  change text NOT NULL,
  summary text NOT NULL,
  run_at text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'cancelled')),
  ran_at text,
  late_by_ms bigint,
  late integer NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
  error text,
  PRIMARY KEY (schedule_id, step)
);
CREATE INDEX schedule_steps_due ON schedule_steps (run_at) WHERE state = 'pending';
`,
  },
];
