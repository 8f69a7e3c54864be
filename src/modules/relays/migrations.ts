import type { Migration } from "../../lib/store";

/**
 * Edge relays seen by this server (or any server of the store): one row per project and relay id, upserted
 * from the SDK paths a relay calls (src/modules/relays/service.ts). Times are ISO text, whose order is
 * their string order (each server's upsert keeps the latest last_seen_at).
 */
export const RELAYS_MIGRATIONS: Migration[] = [
  {
    name: "relay_sightings",
    sqlite: `
CREATE TABLE relay_sightings (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  relay_id TEXT NOT NULL,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  address TEXT NOT NULL,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  streams_open TEXT NOT NULL DEFAULT '',
  last_stream_at TEXT,
  PRIMARY KEY (project_id, relay_id)
) STRICT;
CREATE INDEX relay_sightings_last_seen ON relay_sightings (last_seen_at);
`,
    postgres: `
CREATE TABLE relay_sightings (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  relay_id text NOT NULL,
  name text NOT NULL,
  version text NOT NULL,
  address text NOT NULL,
  first_seen_at text NOT NULL,
  last_seen_at text NOT NULL,
  streams_open text NOT NULL DEFAULT '',
  last_stream_at text,
  PRIMARY KEY (project_id, relay_id)
);
CREATE INDEX relay_sightings_last_seen ON relay_sightings (last_seen_at);
`,
  },
];
