import type { Migration } from "../../lib/db";

/**
 * Dynamic configs: the config and its current JSON Schema, the live value per
 * env, every published version, one draft per env, and the activity log.
 * Activity rows carry no foreign key to the config so that the delete row
 * (and everything before it) outlives the config.
 */
export const configsMigration: Migration = {
  name: "configs",
  sql: `
CREATE TABLE configs (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  schema TEXT NOT NULL,
  schema_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;

CREATE TABLE config_values (
  config_id TEXT NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  value TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (config_id, env)
) STRICT, WITHOUT ROWID;

CREATE TABLE config_versions (
  seq INTEGER PRIMARY KEY,
  config_id TEXT NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  version INTEGER NOT NULL,
  value TEXT NOT NULL,
  actor_email TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (config_id, env, version)
) STRICT;

CREATE TABLE config_drafts (
  config_id TEXT NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  value TEXT NOT NULL,
  base_version INTEGER NOT NULL,
  actor_email TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (config_id, env)
) STRICT, WITHOUT ROWID;

CREATE TABLE config_activity (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  config_id TEXT NOT NULL,
  action TEXT NOT NULL,
  actor_email TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX config_activity_by_config ON config_activity(project_id, config_id, seq);
`,
};

/**
 * A counter every change of a config bumps (schema, values, drafts): values
 * are validated before the write transaction, and the transaction only checks
 * that this counter has not moved since.
 */
export const configChangeSeqMigration: Migration = {
  name: "config_change_seq",
  sql: `ALTER TABLE configs ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 1;`,
};
