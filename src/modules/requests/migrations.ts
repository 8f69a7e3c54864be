import type { Migration } from "../../lib/store";

/**
 * Change requests: one row per request, one per change it holds (JSON `{kind, ...body}` as src/lib/changes.ts
 * stores it, with its description and the fingerprint of what was published when it was opened), one per approval
 * (a person approves once), and the project's approval policy (JSON, read whole).
 */
export const REQUESTS_MIGRATIONS: Migration[] = [
  {
    name: "change_requests",
    sqlite: `
CREATE TABLE change_requests (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  reason TEXT,
  state TEXT NOT NULL CHECK (state IN ('open', 'approved', 'applied', 'rejected', 'withdrawn', 'stale')),
  author TEXT NOT NULL,
  approvals_required INTEGER NOT NULL,
  decided_by TEXT,
  note TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX change_requests_by_project ON change_requests (project_id, created_at);
CREATE TABLE change_request_changes (
  request_id TEXT NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  change TEXT NOT NULL,
  summary TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  PRIMARY KEY (request_id, position)
) STRICT;
CREATE TABLE change_request_approvals (
  request_id TEXT NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
  approver TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (request_id, approver)
) STRICT;
CREATE TABLE approval_policies (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  policy TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
`,
    postgres: `
CREATE TABLE change_requests (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title text NOT NULL,
  reason text,
  state text NOT NULL CHECK (state IN ('open', 'approved', 'applied', 'rejected', 'withdrawn', 'stale')),
  author text NOT NULL,
  approvals_required integer NOT NULL,
  decided_by text,
  note text,
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE INDEX change_requests_by_project ON change_requests (project_id, created_at);
CREATE TABLE change_request_changes (
  request_id text NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
  position integer NOT NULL,
  change text NOT NULL,
  summary text NOT NULL,
  fingerprint text NOT NULL,
  PRIMARY KEY (request_id, position)
);
CREATE TABLE change_request_approvals (
  request_id text NOT NULL REFERENCES change_requests(id) ON DELETE CASCADE,
  approver text NOT NULL,
  created_at text NOT NULL,
  PRIMARY KEY (request_id, approver)
);
CREATE TABLE approval_policies (
  project_id text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  policy text NOT NULL,
  updated_by text NOT NULL,
  updated_at text NOT NULL
);
`,
  },
  {
    // A schedule holds the approved request it publishes (one approval, one schedule): its id, kept once applied.
    name: "change_requests_held_by",
    sqlite: `ALTER TABLE change_requests ADD COLUMN held_by TEXT;`,
    postgres: `ALTER TABLE change_requests ADD COLUMN held_by text;`,
  },
];
