import type { Migration } from "../../lib/store";

/**
 * The projects module's schema steps, in released order (append only; the
 * `sqlite` text of a released step never changes: files made by older
 * binaries carry it).
 *
 * 1. `tenancy`: organisations, their users and projects, the tenancy every
 *    other table hangs from. PostgreSQL has no COLLATE NOCASE: the email is
 *    unique on `lower(email)`, and lookups compare `lower(email)`.
 * 2. `membership_roles`: roles that mean something: a viewer reads, an editor
 *    also writes, an owner also manages members, keys, tokens and settings.
 *    The old `admin` managed, so it becomes owner; the old `member` wrote, so
 *    it becomes editor. SQLite cannot alter a CHECK, so the table is rebuilt;
 *    PostgreSQL swaps the named constraint.
 */
export const PROJECTS_MIGRATIONS: Migration[] = [
  {
    name: "tenancy",
    sqlite: `
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
    postgres: `
CREATE TABLE organisations (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at text NOT NULL
);

CREATE TABLE users (
  id text PRIMARY KEY,
  email text NOT NULL,
  name text,
  created_at text NOT NULL
);
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

CREATE TABLE memberships (
  organisation_id text NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'admin', 'member')),
  created_at text NOT NULL,
  PRIMARY KEY (organisation_id, user_id)
);

CREATE TABLE projects (
  id text PRIMARY KEY,
  organisation_id text NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  name text NOT NULL,
  slug text NOT NULL,
  domain text NOT NULL DEFAULT '',
  owner_email text NOT NULL,
  plan text NOT NULL DEFAULT 'pro',
  status text NOT NULL DEFAULT 'active',
  subscription_status text NOT NULL DEFAULT 'active',
  billing_interval text NOT NULL DEFAULT 'monthly',
  current_period_end text NOT NULL,
  trial_ends_at text,
  cancel_at_period_end integer NOT NULL DEFAULT 0 CHECK (cancel_at_period_end IN (0, 1)),
  module_translations integer NOT NULL DEFAULT 1,
  module_configs integer NOT NULL DEFAULT 1,
  module_gates integer NOT NULL DEFAULT 1,
  module_experiments integer NOT NULL DEFAULT 1,
  module_feedback integer NOT NULL DEFAULT 1,
  public_ticket_creation integer NOT NULL DEFAULT 0,
  default_env text NOT NULL DEFAULT 'prod' CHECK (default_env IN ('dev', 'staging', 'prod')),
  timezone text NOT NULL DEFAULT 'UTC',
  analysis text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE INDEX projects_by_organisation ON projects(organisation_id);
`,
  },
  {
    name: "membership_roles",
    sqlite: `
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
    postgres: `
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
UPDATE memberships SET role = CASE role WHEN 'admin' THEN 'owner' WHEN 'member' THEN 'editor' ELSE role END;
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'editor', 'viewer'));
CREATE INDEX memberships_by_user ON memberships(user_id);
`,
  },
  {
    name: "event_retention",
    sqlite: "ALTER TABLE projects ADD COLUMN event_retention_days INTEGER NOT NULL DEFAULT 30;",
    postgres: "ALTER TABLE projects ADD COLUMN event_retention_days integer NOT NULL DEFAULT 30;",
  },
  {
    // Browser origins admitted besides the domain's (a JSON array of origins; DECISIONS "The browser key").
    name: "allowed_origins",
    sqlite: "ALTER TABLE projects ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';",
    postgres: "ALTER TABLE projects ADD COLUMN allowed_origins text NOT NULL DEFAULT '[]';",
  },
  {
    // Days after which a flag that served one value to everyone, or was never evaluated, is listed stale (issue 30).
    name: "stale_after_days",
    sqlite: "ALTER TABLE projects ADD COLUMN stale_after_days INTEGER NOT NULL DEFAULT 30;",
    postgres: "ALTER TABLE projects ADD COLUMN stale_after_days integer NOT NULL DEFAULT 30;",
  },
];
