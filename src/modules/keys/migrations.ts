import type { Migration } from "../../lib/store";

/**
 * The keys module's schema steps, in released order (append only; the
 * `sqlite` text of a released step never changes).
 *
 * 1. `sdk_keys`: only the SHA-256 of the secret and a short tail for display are kept.
 * 2. `browser_keys`: the `browser` type, and `env` (the one env a browser key evaluates; null for the others).
 *    SQLite cannot change a CHECK in place: the table is rebuilt (nothing references it).
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
  {
    name: "browser_keys",
    sqlite: `
CREATE TABLE sdk_keys_next (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('admin', 'client', 'server', 'browser')),
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  secret_tail TEXT NOT NULL,
  allowed_origin TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT,
  env TEXT CHECK (env IN ('dev', 'staging', 'prod'))
) STRICT;
INSERT INTO sdk_keys_next (id, project_id, type, name, scopes, secret_hash, secret_tail, allowed_origin, created_at, last_used_at, revoked_at)
  SELECT id, project_id, type, name, scopes, secret_hash, secret_tail, allowed_origin, created_at, last_used_at, revoked_at FROM sdk_keys;
DROP TABLE sdk_keys;
ALTER TABLE sdk_keys_next RENAME TO sdk_keys;
CREATE INDEX sdk_keys_by_project ON sdk_keys(project_id);
`,
    postgres: `
ALTER TABLE sdk_keys DROP CONSTRAINT sdk_keys_type_check;
ALTER TABLE sdk_keys ADD CONSTRAINT sdk_keys_type_check CHECK (type IN ('admin', 'client', 'server', 'browser'));
ALTER TABLE sdk_keys ADD COLUMN env text CHECK (env IN ('dev', 'staging', 'prod'));
`,
  },
];
