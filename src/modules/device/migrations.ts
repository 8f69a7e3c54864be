import type { Migration } from "../../lib/store";

/** The device module's schema steps, in their released order (append only); `sqlite` is the released SQL, verbatim. */
export const DEVICE_MIGRATIONS: Migration[] = [
  /**
   * Device sign-in (RFC 8628 with PKCE) and the token pairs it hands out.
   * A family is one sign-in: its refresh tokens rotate, and revoking the
   * family ends every token of it. Only SHA-256 hashes of secrets are kept.
   * `grace_payload` is unused since issue 8 (no grace window: a reused
   * refresh token revokes its family); the column stays for old files.
   */
  {
    name: "device_sign_in",
    sqlite: `
CREATE TABLE device_codes (
  id TEXT PRIMARY KEY,
  device_code_hash TEXT NOT NULL UNIQUE,
  user_code TEXT NOT NULL UNIQUE,
  code_challenge TEXT NOT NULL,
  client_name TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
  user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
  project_id TEXT REFERENCES projects(id) ON DELETE SET NULL,
  interval_s INTEGER NOT NULL,
  last_polled_at TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) STRICT;

CREATE TABLE token_families (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  project_id TEXT REFERENCES projects(id) ON DELETE SET NULL,
  client_name TEXT,
  generation INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  revoked_reason TEXT
) STRICT;
CREATE INDEX token_families_by_user ON token_families(user_id);

CREATE TABLE device_tokens (
  token_hash TEXT PRIMARY KEY,
  family_id TEXT NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  generation INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  rotated_at TEXT,
  grace_payload TEXT
) STRICT;
CREATE INDEX device_tokens_by_family ON device_tokens(family_id);
`,
    postgres: `
CREATE TABLE device_codes (
  id text PRIMARY KEY,
  device_code_hash text NOT NULL UNIQUE,
  user_code text NOT NULL UNIQUE,
  code_challenge text NOT NULL,
  client_name text,
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
  user_id text REFERENCES users(id) ON DELETE CASCADE,
  project_id text REFERENCES projects(id) ON DELETE SET NULL,
  interval_s integer NOT NULL,
  last_polled_at text,
  created_at text NOT NULL,
  expires_at text NOT NULL
);

CREATE TABLE token_families (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  project_id text REFERENCES projects(id) ON DELETE SET NULL,
  client_name text,
  generation integer NOT NULL,
  created_at text NOT NULL,
  revoked_at text,
  revoked_reason text
);
CREATE INDEX token_families_by_user ON token_families(user_id);

CREATE TABLE device_tokens (
  token_hash text PRIMARY KEY,
  family_id text NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  generation integer NOT NULL,
  created_at text NOT NULL,
  expires_at text NOT NULL,
  rotated_at text,
  grace_payload text
);
CREATE INDEX device_tokens_by_family ON device_tokens(family_id);
`,
  },
  /** Serve the cleanup job: expired codes and tokens are found by expiry, not by a scan. */
  {
    name: "device_expiry_indexes",
    sqlite: `
CREATE INDEX device_codes_by_expiry ON device_codes(expires_at);
CREATE INDEX device_tokens_by_expiry ON device_tokens(expires_at);
CREATE INDEX token_families_by_creation ON token_families(created_at);
`,
    postgres: `
CREATE INDEX device_codes_by_expiry ON device_codes(expires_at);
CREATE INDEX device_tokens_by_expiry ON device_tokens(expires_at);
CREATE INDEX token_families_by_creation ON token_families(created_at);
`,
  },
];
