import type { Migration } from "../../lib/store";

/**
 * Translation profiles and their keys. A profile is one locale's set of
 * keys (`name` and `locale` each unique in the project); a key belongs to one
 * profile and goes with it. `project_id` on the keys lets a project's keys be
 * listed (and published) in one query.
 */
export const I18N_MIGRATIONS: Migration[] = [
  {
    name: "i18n",
    sqlite: `
CREATE TABLE i18n_profiles (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  locale TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (project_id, name),
  UNIQUE (project_id, locale)
) STRICT;
CREATE TABLE i18n_keys (
  profile_id TEXT NOT NULL REFERENCES i18n_profiles(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (profile_id, key)
) STRICT;
CREATE INDEX i18n_keys_project ON i18n_keys (project_id, key);
`,
    postgres: `
CREATE TABLE i18n_profiles (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  locale text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  UNIQUE (project_id, name),
  UNIQUE (project_id, locale)
);
CREATE TABLE i18n_keys (
  profile_id text NOT NULL REFERENCES i18n_profiles(id) ON DELETE CASCADE,
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  key text NOT NULL,
  value text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  PRIMARY KEY (profile_id, key)
);
CREATE INDEX i18n_keys_project ON i18n_keys (project_id, key);
`,
  },
];
