import type { Migration } from "../../lib/store";

/** The catalog of context attributes: declared by people (manual) or seen in evaluation contexts (auto). */
export const ATTRIBUTES_MIGRATIONS: Migration[] = [
  {
    name: "attributes",
    sqlite: `
CREATE TABLE attributes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  enum_values TEXT,
  required INTEGER NOT NULL CHECK (required IN (0, 1)),
  description TEXT,
  sdk_path TEXT,
  source TEXT NOT NULL CHECK (source IN ('manual', 'auto')),
  deprecated INTEGER NOT NULL CHECK (deprecated IN (0, 1)),
  created_at TEXT NOT NULL,
  last_seen_at TEXT,
  UNIQUE (project_id, name)
) STRICT;
`,
    postgres: `
CREATE TABLE attributes (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL,
  enum_values text,
  required integer NOT NULL CHECK (required IN (0, 1)),
  description text,
  sdk_path text,
  source text NOT NULL CHECK (source IN ('manual', 'auto')),
  deprecated integer NOT NULL CHECK (deprecated IN (0, 1)),
  created_at text NOT NULL,
  last_seen_at text,
  UNIQUE (project_id, name)
);
`,
  },
];
