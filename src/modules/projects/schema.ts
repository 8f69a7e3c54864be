import type { Migration } from "../../lib/db";

/** Organisations, their users and projects: the tenancy every other table hangs from. */
export const tenancyMigration: Migration = {
  name: "tenancy",
  sql: `
CREATE TABLE organisations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name TEXT,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE memberships (
  organisation_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (organisation_id, user_id)
) STRICT;

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  slug TEXT NOT NULL,
  domain TEXT NOT NULL DEFAULT '',
  owner_email TEXT NOT NULL,
  plan TEXT NOT NULL DEFAULT 'pro',
  status TEXT NOT NULL DEFAULT 'active',
  subscription_status TEXT NOT NULL DEFAULT 'active',
  billing_interval TEXT NOT NULL DEFAULT 'monthly',
  current_period_end TEXT NOT NULL,
  trial_ends_at TEXT,
  cancel_at_period_end INTEGER NOT NULL DEFAULT 0 CHECK (cancel_at_period_end IN (0, 1)),
  module_translations INTEGER NOT NULL DEFAULT 1,
  module_configs INTEGER NOT NULL DEFAULT 1,
  module_gates INTEGER NOT NULL DEFAULT 1,
  module_experiments INTEGER NOT NULL DEFAULT 1,
  module_feedback INTEGER NOT NULL DEFAULT 1,
  public_ticket_creation INTEGER NOT NULL DEFAULT 0,
  default_env TEXT NOT NULL DEFAULT 'prod' CHECK (default_env IN ('dev', 'staging', 'prod')),
  timezone TEXT NOT NULL DEFAULT 'UTC',
  analysis TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX projects_by_organisation ON projects(organisation_id);
`,
};

/**
 * Roles that mean something: a viewer reads, an editor also writes, an owner
 * also manages members, keys, tokens and settings. The old `admin` managed,
 * so it becomes owner; the old `member` wrote, so it becomes editor.
 * SQLite cannot alter a CHECK, so the table is rebuilt.
 */
export const rolesMigration: Migration = {
  name: "membership_roles",
  sql: `
CREATE TABLE memberships_next (
  organisation_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (organisation_id, user_id)
) STRICT;
INSERT INTO memberships_next (organisation_id, user_id, role, created_at)
  SELECT organisation_id, user_id, CASE role WHEN 'admin' THEN 'owner' WHEN 'member' THEN 'editor' ELSE role END, created_at
  FROM memberships;
DROP TABLE memberships;
ALTER TABLE memberships_next RENAME TO memberships;
CREATE INDEX memberships_by_user ON memberships(user_id);
`,
};
