import type { Migration } from "../../lib/db";

/** Project API tokens (`svc_pat_`, SERVICE_CLI_TOKEN): one project each; only the SHA-256 and a tail are kept. */
export const apiTokensMigration: Migration = {
  name: "api_tokens",
  sql: `
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  access TEXT NOT NULL CHECK (access IN ('read-only', 'read-write')),
  secret_hash TEXT NOT NULL UNIQUE,
  secret_tail TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;
CREATE INDEX api_tokens_by_project ON api_tokens(project_id);
`,
};
