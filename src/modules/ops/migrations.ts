import type { Migration } from "../../lib/store";

/**
 * Queue items (bug reports, feature requests, and the items the platform
 * files for tracked errors and firing alerts) and the per-project counter
 * their `number` comes from. The counter row is bumped in the transaction
 * that inserts the item, under the project's ops lock, so numbers have no
 * gap and no duplicate (UNIQUE (project_id, number) backs that up).
 *
 * `title_key` is the title folded for the intake's dedupe (lower case,
 * whitespace runs as one space, trimmed). `source` is who filed it (admin,
 * intake, platform); `source_ref` is the tracked error (`err_…`) or alert
 * rule (`ar_…`) a platform item is about.
 */
export const OPS_MIGRATIONS: Migration[] = [
  {
    name: "ops_items",
    sqlite: `
CREATE TABLE ops_counters (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  last_number INTEGER NOT NULL
) STRICT;
CREATE TABLE ops_items (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('bug', 'feature_request', 'error', 'alert')),
  status TEXT NOT NULL CHECK (status IN ('pending_approval', 'open', 'in_progress', 'done', 'rejected')),
  priority TEXT NOT NULL CHECK (priority IN ('high', 'medium', 'low', 'nice_to_have')),
  title TEXT NOT NULL,
  title_key TEXT NOT NULL,
  steps_to_reproduce TEXT,
  actual_result TEXT,
  expected_result TEXT,
  use_case TEXT,
  source TEXT NOT NULL CHECK (source IN ('admin', 'intake', 'platform')),
  source_ref TEXT,
  reported_by TEXT NOT NULL,
  times_filed INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status_changed_at TEXT NOT NULL,
  status_changed_by TEXT NOT NULL,
  UNIQUE (project_id, number)
) STRICT;
CREATE INDEX ops_items_title ON ops_items (project_id, title_key);
CREATE INDEX ops_items_source ON ops_items (project_id, source_ref) WHERE source_ref IS NOT NULL;
`,
    postgres: `
CREATE TABLE ops_counters (
  project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  last_number integer NOT NULL
);
CREATE TABLE ops_items (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  number integer NOT NULL,
  type text NOT NULL CHECK (type IN ('bug', 'feature_request', 'error', 'alert')),
  status text NOT NULL CHECK (status IN ('pending_approval', 'open', 'in_progress', 'done', 'rejected')),
  priority text NOT NULL CHECK (priority IN ('high', 'medium', 'low', 'nice_to_have')),
  title text NOT NULL,
  title_key text NOT NULL,
  steps_to_reproduce text,
  actual_result text,
  expected_result text,
  use_case text,
  source text NOT NULL CHECK (source IN ('admin', 'intake', 'platform')),
  source_ref text,
  reported_by text NOT NULL,
  times_filed integer NOT NULL DEFAULT 1,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  status_changed_at text NOT NULL,
  status_changed_by text NOT NULL,
  UNIQUE (project_id, number)
);
CREATE INDEX ops_items_title ON ops_items (project_id, title_key);
CREATE INDEX ops_items_source ON ops_items (project_id, source_ref) WHERE source_ref IS NOT NULL;
`,
  },
];
