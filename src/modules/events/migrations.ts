import type { Migration } from "../../lib/store";

/** The event catalog: names that metrics reference, registered by people or discovered from ingest (pending). */
export const EVENTS_MIGRATIONS: Migration[] = [
  {
    name: "event_catalog",
    sqlite: `
CREATE TABLE event_catalog (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  folder TEXT NOT NULL,
  description TEXT NOT NULL,
  properties TEXT NOT NULL,
  pending INTEGER NOT NULL CHECK (pending IN (0, 1)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_seen_at TEXT,
  UNIQUE (project_id, name)
) STRICT;
`,
    postgres: `
CREATE TABLE event_catalog (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  folder text NOT NULL,
  description text NOT NULL,
  properties text NOT NULL,
  pending integer NOT NULL CHECK (pending IN (0, 1)),
  created_at text NOT NULL,
  updated_at text NOT NULL,
  last_seen_at text,
  UNIQUE (project_id, name)
);
`,
  },
];
