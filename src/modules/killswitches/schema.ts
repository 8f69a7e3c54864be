import type { Migration } from "../../lib/db";

/**
 * Killswitches: one row per switch, its live state per env, and every
 * published version per env (the history and the rollback source).
 */
export const killswitchesMigration: Migration = {
  name: "killswitches",
  sql: `
CREATE TABLE killswitches (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;

CREATE TABLE killswitch_envs (
  killswitch_id TEXT NOT NULL REFERENCES killswitches(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  value INTEGER NOT NULL CHECK (value IN (0, 1)),
  switches TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  PRIMARY KEY (killswitch_id, env)
) STRICT, WITHOUT ROWID;

CREATE TABLE killswitch_versions (
  seq INTEGER PRIMARY KEY,
  killswitch_id TEXT NOT NULL REFERENCES killswitches(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  version INTEGER NOT NULL,
  value INTEGER NOT NULL CHECK (value IN (0, 1)),
  switches TEXT NOT NULL,
  action TEXT NOT NULL,
  actor_email TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (killswitch_id, env, version)
) STRICT;
`,
};
