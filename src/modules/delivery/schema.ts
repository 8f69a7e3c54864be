import type { Migration } from "../../lib/db";

/** Per project and env, a counter every publish bumps: the snapshot ETag and the stream event id. */
export const revisionsMigration: Migration = {
  name: "env_revisions",
  sql: `
CREATE TABLE env_revisions (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  revision INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project_id, env)
) STRICT, WITHOUT ROWID;
`,
};
