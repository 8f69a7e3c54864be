import type { Migration } from "../../lib/db";

/**
 * Browser sign-in: single-use links (magic links and the first-run setup
 * link), sessions and pending OIDC logins. Secrets are stored as SHA-256
 * only; times are ISO strings from the service clock.
 */
export const identityMigration: Migration = {
  name: "identity",
  sql: `
CREATE TABLE sign_in_links (
  token_hash TEXT PRIMARY KEY,
  purpose TEXT NOT NULL CHECK (purpose IN ('magic', 'setup')),
  email TEXT COLLATE NOCASE,
  redirect TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
) STRICT;
CREATE INDEX sign_in_links_by_purpose ON sign_in_links(purpose, used_at);

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;
CREATE INDEX sessions_by_user ON sessions(user_id);

CREATE TABLE oidc_logins (
  state_hash TEXT PRIMARY KEY,
  nonce TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  redirect TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT;
`,
};
