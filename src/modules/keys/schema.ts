import type { Migration } from "../../lib/db";

/** SDK keys: only the SHA-256 of the secret and a short tail for display are kept. */
export const sdkKeysMigration: Migration = {
  name: "sdk_keys",
  sql: `
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
};
