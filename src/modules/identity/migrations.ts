import type { Migration } from "../../lib/store";

/**
 * The identity module's schema steps, in their released order (append only).
 * The `sqlite` text of each step is the released SQL, verbatim.
 */
export const IDENTITY_MIGRATIONS: Migration[] = [
  /**
   * Browser sign-in: single-use links (magic links and the first-run setup
   * link), sessions and pending OIDC logins. Secrets are stored as SHA-256
   * only; times are ISO strings from the service clock.
   * On PostgreSQL `sign_in_links.email` is plain text: it is never looked up
   * (links are found by their hash), and the service stores it lowercased.
   */
  {
    name: "identity",
    sqlite: `
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
    postgres: `
CREATE TABLE sign_in_links (
  token_hash text PRIMARY KEY,
  purpose text NOT NULL CHECK (purpose IN ('magic', 'setup')),
  email text,
  redirect text,
  created_at text NOT NULL,
  expires_at text NOT NULL,
  used_at text
);
CREATE INDEX sign_in_links_by_purpose ON sign_in_links(purpose, used_at);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at text NOT NULL,
  expires_at text NOT NULL,
  revoked_at text
);
CREATE INDEX sessions_by_user ON sessions(user_id);

CREATE TABLE oidc_logins (
  state_hash text PRIMARY KEY,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  redirect text,
  created_at text NOT NULL,
  expires_at text NOT NULL
);
`,
  },
  /**
   * OIDC accounts are bound to the provider's issuer + subject (an email can
   * change hands at the provider; the subject cannot). Pending logins keep the
   * PKCE verifier and nonce sealed under a key only the browser's cookie holds,
   * so the database alone cannot finish someone's sign-in. Pending logins are
   * ten-minute records, so the old table is simply replaced.
   * The expiry indexes serve the cleanup job.
   */
  {
    name: "oidc_identities",
    sqlite: `
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
    postgres: `
CREATE TABLE user_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email text NOT NULL,
  created_at text NOT NULL,
  last_used_at text NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_by_user ON user_identities(user_id);

DROP TABLE oidc_logins;
CREATE TABLE oidc_logins (
  state_hash text PRIMARY KEY,
  sealed text NOT NULL,
  redirect text,
  created_at text NOT NULL,
  expires_at text NOT NULL
);
CREATE INDEX oidc_logins_by_expiry ON oidc_logins(expires_at);
CREATE INDEX sign_in_links_by_expiry ON sign_in_links(expires_at);
CREATE INDEX sessions_by_expiry ON sessions(expires_at);
`,
  },
  /**
   * Invitations wait for the person's acceptance (issue 25): until then they
   * are no member and reach nothing. One pending invitation per organisation
   * and address (stored lowercased); `token_hash` is the sign-in link the
   * invitation mail carries, and using that link accepts it.
   */
  {
    name: "invitations",
    sqlite: `
CREATE TABLE invitations (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
  token_hash TEXT NOT NULL UNIQUE,
  invited_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  UNIQUE (organisation_id, email)
) STRICT;
CREATE INDEX invitations_by_expiry ON invitations(expires_at);
`,
    postgres: `
CREATE TABLE invitations (
  id text PRIMARY KEY,
  organisation_id text NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
  token_hash text NOT NULL UNIQUE,
  invited_by text NOT NULL,
  created_at text NOT NULL,
  expires_at text NOT NULL,
  UNIQUE (organisation_id, email)
);
CREATE INDEX invitations_by_expiry ON invitations(expires_at);
`,
  },
];
