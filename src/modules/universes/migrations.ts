import type { Migration } from "../../lib/store";

/**
 * Universes: a unit space of 10,000 segments (by a salted hash of the unit
 * id) that experiments share. The holdout is `[holdout_start, holdout_end)`
 * in segments, both null when there is none.
 */
export const UNIVERSES_MIGRATIONS: Migration[] = [
  {
    name: "universes",
    sqlite: `
CREATE TABLE universes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  unit_type TEXT NOT NULL CHECK (unit_type IN ('user_id', 'account_id')),
  holdout_start INTEGER,
  holdout_end INTEGER,
  salt TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((holdout_start IS NULL AND holdout_end IS NULL) OR (holdout_start >= 0 AND holdout_start < holdout_end AND holdout_end <= 10000)),
  UNIQUE (project_id, name)
) STRICT;
`,
    postgres: `
CREATE TABLE universes (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  unit_type text NOT NULL CHECK (unit_type IN ('user_id', 'account_id')),
  holdout_start integer,
  holdout_end integer,
  salt text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  CHECK ((holdout_start IS NULL AND holdout_end IS NULL) OR (holdout_start >= 0 AND holdout_start < holdout_end AND holdout_end <= 10000)),
  UNIQUE (project_id, name)
);
`,
  },
];
