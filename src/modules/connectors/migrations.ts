import type { Migration } from "../../lib/store";

/**
 * Connectors and their deliveries.
 *
 * - `connectors`: one target of a project (provider, name, subscribed event
 *   types, provider config, enabled). `natural_key` is set for trigger
 *   providers (routineId, repoUrl, owner/repo, source) and unique per
 *   project and provider, so re-creating one updates it. `credentials` is
 *   AES-GCM sealed JSON (secrets.ts); `credential_fields` only names what is
 *   stored, for reads.
 * - `connector_deliveries`: one event for one connector, made by fan-out from
 *   `outbox_events` (unique per connector and event, so fanning out twice
 *   makes one) or by a test-fire. `pending` until `delivered` or `failed`;
 *   `next_attempt_at` (epoch ms) is when it is due, `claimed_until` (epoch ms)
 *   the lease of the server sending it.
 * - `connector_attempts`: every try, for the delivery log.
 * - `connector_oauth_states`: an OAuth authorization in progress (the state's
 *   SHA-256, the sealed PKCE verifier), for at most 10 minutes; `session_id`
 *   and `user_id` bind it to the browser session and person who started it
 *   (the callback must come from that session, else it stores nothing).
 */
export const CONNECTORS_MIGRATIONS: Migration[] = [
  {
    name: "connectors",
    sqlite: `
CREATE TABLE connectors (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  name TEXT NOT NULL,
  events TEXT NOT NULL,
  config TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  natural_key TEXT,
  credentials TEXT,
  credential_fields TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX connectors_natural_key ON connectors (project_id, provider, natural_key) WHERE natural_key IS NOT NULL;
CREATE INDEX connectors_project ON connectors (project_id, created_at);

CREATE TABLE connector_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  connector_id TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  event_created_at TEXT NOT NULL,
  test INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  claimed_until INTEGER NOT NULL DEFAULT 0,
  claimed_by TEXT,
  last_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  delivered_at TEXT,
  UNIQUE (connector_id, event_id)
) STRICT;
CREATE INDEX connector_deliveries_due ON connector_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX connector_deliveries_log ON connector_deliveries (connector_id, seq);

CREATE TABLE connector_attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL REFERENCES connector_deliveries(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  at TEXT NOT NULL,
  status INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  response TEXT
) STRICT;
CREATE INDEX connector_attempts_delivery ON connector_attempts (delivery_id, seq);

CREATE TABLE connector_oauth_states (
  state_hash TEXT PRIMARY KEY,
  connector_id TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  verifier TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  return_to TEXT,
  actor_email TEXT NOT NULL,
  actor_type TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
`,
    postgres: `
CREATE TABLE connectors (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider text NOT NULL,
  name text NOT NULL,
  events text NOT NULL,
  config text NOT NULL,
  enabled integer NOT NULL,
  natural_key text,
  credentials text,
  credential_fields text NOT NULL DEFAULT '[]',
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE UNIQUE INDEX connectors_natural_key ON connectors (project_id, provider, natural_key) WHERE natural_key IS NOT NULL;
CREATE INDEX connectors_project ON connectors (project_id, created_at);

CREATE TABLE connector_deliveries (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  connector_id text NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
  project_id text NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  payload text NOT NULL,
  event_created_at text NOT NULL,
  test integer NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  claimed_until bigint NOT NULL DEFAULT 0,
  claimed_by text,
  last_status integer,
  last_error text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  delivered_at text,
  UNIQUE (connector_id, event_id)
);
CREATE INDEX connector_deliveries_due ON connector_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX connector_deliveries_log ON connector_deliveries (connector_id, seq);

CREATE TABLE connector_attempts (
  seq bigserial PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES connector_deliveries(id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  at text NOT NULL,
  status integer,
  error text,
  duration_ms integer NOT NULL,
  response text
);
CREATE INDEX connector_attempts_delivery ON connector_attempts (delivery_id, seq);

CREATE TABLE connector_oauth_states (
  state_hash text PRIMARY KEY,
  connector_id text NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
  project_id text NOT NULL,
  verifier text NOT NULL,
  redirect_uri text NOT NULL,
  return_to text,
  actor_email text NOT NULL,
  actor_type text NOT NULL,
  expires_at bigint NOT NULL
);
`,
  },
  {
    name: "connectors-oauth-binding",
    sqlite: `
ALTER TABLE connector_oauth_states ADD COLUMN session_id TEXT;
ALTER TABLE connector_oauth_states ADD COLUMN user_id TEXT;
`,
    postgres: `
ALTER TABLE connector_oauth_states ADD COLUMN session_id text;
ALTER TABLE connector_oauth_states ADD COLUMN user_id text;
`,
  },
];
