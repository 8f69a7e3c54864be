import type { Migration } from "../../lib/store";

/**
 * Evaluation counts per (project, flag name, env, UTC day), added to by every server's flush (one upsert-add
 * per row, atomic on both engines), and the last weekly stale digest per project (claimed atomically, so
 * several servers send it once). Released steps, in order; never edited.
 */
export const USAGE_MIGRATIONS: Migration[] = [
  {
    name: "flag_evaluations",
    sqlite: `
CREATE TABLE flag_evaluations (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  flag TEXT NOT NULL,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  day TEXT NOT NULL,
  count INTEGER NOT NULL,
  last_at TEXT NOT NULL,
  PRIMARY KEY (project_id, flag, env, day)
) STRICT, WITHOUT ROWID;
CREATE INDEX flag_evaluations_by_day ON flag_evaluations (day);

CREATE TABLE stale_digests (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  sent_at TEXT NOT NULL
) STRICT;
`,
    postgres: `
CREATE TABLE flag_evaluations (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  flag text NOT NULL,
  env text NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  day text NOT NULL,
  count bigint NOT NULL,
  last_at text NOT NULL,
  PRIMARY KEY (project_id, flag, env, day)
);
CREATE INDEX flag_evaluations_by_day ON flag_evaluations (day);

CREATE TABLE stale_digests (
  project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  sent_at text NOT NULL
);
`,
  },
];
