import type { Migration } from "../../lib/store";

/**
 * Segments: a named set of units per project. The id list is one JSON text
 * (up to 100,000 ids): it is always read and written whole (the snapshot
 * carries it whole), so a child table would only add 100,000 rows to each
 * write. `id_count` lets the list show sizes without reading the lists.
 */
export const SEGMENTS_MIGRATIONS: Migration[] = [
  {
    name: "segments",
    sqlite: `
CREATE TABLE segments (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  attribute TEXT NOT NULL,
  conditions TEXT NOT NULL DEFAULT '[]',
  ids TEXT NOT NULL DEFAULT '[]',
  id_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name)
) STRICT;
`,
    postgres: `
CREATE TABLE segments (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  attribute text NOT NULL,
  conditions text NOT NULL DEFAULT '[]',
  ids text NOT NULL DEFAULT '[]',
  id_count integer NOT NULL DEFAULT 0,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  UNIQUE (project_id, name)
);
`,
  },
];
