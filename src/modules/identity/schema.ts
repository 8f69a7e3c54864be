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

/**
 * OIDC accounts are bound to the provider's issuer + subject (an email can
 * change hands at the provider; the subject cannot). Pending logins keep the
 * PKCE verifier and nonce sealed under a key only the browser's cookie holds,
 * so the database alone cannot finish someone's sign-in. Pending logins are
 * ten-minute records, so the old table is simply replaced.
 * The expiry indexes serve the cleanup job.
 */
export const oidcIdentitiesMigration: Migration = {
  name: "oidc_identities",
  sql: `
CREATE TABLE user_identities (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
) STRICT;
CREATE INDEX user_identities_by_user ON user_identities(user_id);

DROP TABLE oidc_logins;
CREATE TABLE oidc_logins (
  state_hash TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  redirect TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX oidc_logins_by_expiry ON oidc_logins(expires_at);
CREATE INDEX sign_in_links_by_expiry ON sign_in_links(expires_at);
CREATE INDEX sessions_by_expiry ON sessions(expires_at);
`,
};
