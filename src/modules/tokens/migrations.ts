import type { Migration } from "../../lib/store";

/** The tokens module's schema steps, in their released order (append only); `sqlite` is the released SQL, verbatim. */
export const TOKENS_MIGRATIONS: Migration[] = [
  /** Project API tokens (`svc_pat_`, SERVICE_CLI_TOKEN): one project each; only the SHA-256 and a tail are kept. */
  {
    name: "api_tokens",
    sqlite: `
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
    postgres: `
CREATE TABLE api_tokens (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  access text NOT NULL CHECK (access IN ('read-only', 'read-write')),
  secret_hash text NOT NULL UNIQUE,
  secret_tail text NOT NULL,
  created_by text NOT NULL,
  created_at text NOT NULL,
  revoked_at text
);
CREATE INDEX api_tokens_by_project ON api_tokens(project_id);
`,
  },
];
