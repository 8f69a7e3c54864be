import type { Migration } from "../../lib/store";

/**
 * Code references pushed by `svc refs push`: one row per repository (its last push) and its
 * references (flag, file, line, kind), replaced whole by each push. File names are text from
 * outside: stored as sent, shown as text.
 */
export const REFS_MIGRATIONS: Migration[] = [
  {
    name: "code_refs",
    sqlite: `
CREATE TABLE code_ref_repos (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  repo TEXT NOT NULL,
  branch TEXT,
  commit_sha TEXT NOT NULL,
  ref_count INTEGER NOT NULL,
  flag_count INTEGER NOT NULL,
  pushed_at TEXT NOT NULL,
  pushed_by TEXT NOT NULL,
  PRIMARY KEY (project_id, repo)
) STRICT;
CREATE TABLE code_refs (
  project_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  flag TEXT NOT NULL,
  file TEXT NOT NULL,
  line INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('sdk', 'string')),
  FOREIGN KEY (project_id, repo) REFERENCES code_ref_repos (project_id, repo) ON DELETE CASCADE
) STRICT;
CREATE INDEX code_refs_flag ON code_refs (project_id, flag);
CREATE INDEX code_refs_repo ON code_refs (project_id, repo);
`,
    postgres: `
CREATE TABLE code_ref_repos (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  repo text NOT NULL,
  branch text,
  commit_sha text NOT NULL,
  ref_count integer NOT NULL,
  flag_count integer NOT NULL,
  pushed_at text NOT NULL,
  pushed_by text NOT NULL,
  PRIMARY KEY (project_id, repo)
);
CREATE TABLE code_refs (
  project_id text NOT NULL,
  repo text NOT NULL,
  flag text NOT NULL,
  file text NOT NULL,
  line integer NOT NULL,
  kind text NOT NULL CHECK (kind IN ('sdk', 'string')),
  FOREIGN KEY (project_id, repo) REFERENCES code_ref_repos (project_id, repo) ON DELETE CASCADE
);
CREATE INDEX code_refs_flag ON code_refs (project_id, flag);
CREATE INDEX code_refs_repo ON code_refs (project_id, repo);
`,
  },
];
