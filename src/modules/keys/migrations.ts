import type { Migration } from "../../lib/store";

/**
 * The keys module's schema steps, in released order (append only; the
 * `sqlite` text of a released step never changes).
 *
 * 1. `sdk_keys`: only the SHA-256 of the secret and a short tail for display are kept.
 */
export const KEYS_MIGRATIONS: Migration[] = [
  {
    name: "sdk_keys",
    sqlite: `
CREATE TABLE sdk_keys (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('admin', 'client', 'server')),
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  secret_tail TEXT NOT NULL,
  allowed_origin TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
) STRICT;
CREATE INDEX sdk_keys_by_project ON sdk_keys(project_id);
`,
    postgres: `
CREATE TABLE sdk_keys (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('admin', 'client', 'server')),
  name text NOT NULL,
  scopes text NOT NULL,
  secret_hash text NOT NULL UNIQUE,
  secret_tail text NOT NULL,
  allowed_origin text,
  created_at text NOT NULL,
  last_used_at text,
  revoked_at text
);
CREATE INDEX sdk_keys_by_project ON sdk_keys(project_id);
`,
  },
];
