import type { Migration } from "../../lib/store";

/**
 * Tracked errors (one row per fingerprint and project) and the units each
 * happened to: a row per (error, unit), inserted or ignored, so that
 * `affected_units` is exact. Occurrences themselves go to the event store
 * (`$error:<fingerprint>`); the details (frames, tags, unit) of the last few
 * and of a sample of older ones to error_occurrences.
 */
export const ERRORS_MIGRATIONS: Migration[] = [
  {
    name: "tracked_errors",
    sqlite: `
CREATE TABLE tracked_errors (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  fingerprint TEXT NOT NULL,
  type TEXT NOT NULL,
  message TEXT NOT NULL,
  culprit TEXT,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  count INTEGER NOT NULL,
  affected_units INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('unresolved', 'resolved', 'ignored', 'regressed')),
  status_changed_at TEXT,
  status_changed_by TEXT,
  UNIQUE (project_id, fingerprint)
) STRICT;
CREATE INDEX tracked_errors_last_seen ON tracked_errors (project_id, last_seen_at);
CREATE TABLE tracked_error_units (
  error_id TEXT NOT NULL REFERENCES tracked_errors(id) ON DELETE CASCADE,
  unit_id TEXT NOT NULL,
  PRIMARY KEY (error_id, unit_id)
) STRICT, WITHOUT ROWID;
`,
    postgres: `
CREATE TABLE tracked_errors (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  fingerprint text NOT NULL,
  type text NOT NULL,
  message text NOT NULL,
  culprit text,
  first_seen_at text NOT NULL,
  last_seen_at text NOT NULL,
  count bigint NOT NULL,
  affected_units bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('unresolved', 'resolved', 'ignored', 'regressed')),
  status_changed_at text,
  status_changed_by text,
  UNIQUE (project_id, fingerprint)
);
CREATE INDEX tracked_errors_last_seen ON tracked_errors (project_id, last_seen_at);
CREATE TABLE tracked_error_units (
  error_id text NOT NULL REFERENCES tracked_errors(id) ON DELETE CASCADE,
  unit_id text NOT NULL,
  PRIMARY KEY (error_id, unit_id)
);
`,
  },
  {
    // Issue 27, item 2: the frames, tags, release, environment and unit of an error's last 20 occurrences
    // and of a sample of 5 older ones (occurrences.ts); `data` is their JSON, at most 48 KiB each.
    name: "error_occurrences",
    sqlite: `
CREATE TABLE error_occurrences (
  id TEXT PRIMARY KEY,
  error_id TEXT NOT NULL REFERENCES tracked_errors(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  kept TEXT NOT NULL CHECK (kept IN ('recent', 'sample')),
  slot INTEGER,
  ts TEXT NOT NULL,
  data TEXT NOT NULL,
  UNIQUE (error_id, seq)
) STRICT;
`,
    postgres: `
CREATE TABLE error_occurrences (
  id text PRIMARY KEY,
  error_id text NOT NULL REFERENCES tracked_errors(id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  kept text NOT NULL CHECK (kept IN ('recent', 'sample')),
  slot integer,
  ts text NOT NULL,
  data text NOT NULL,
  UNIQUE (error_id, seq)
);
`,
  },
];
