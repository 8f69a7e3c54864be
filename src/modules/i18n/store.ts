import type { Queryable } from "../../lib/store";

// The i18n module's own queries (both engines). Lists are sorted by the service (code-unit order on
// both engines: PostgreSQL's ORDER BY would follow the database's collation, SQLite's is binary).

export type ProfileRow = {
  id: string;
  name: string;
  locale: string;
  created_at: string;
  updated_at: string;
};

export type ProfileWithCount = ProfileRow & { key_count: number | string };

export type KeyRow = {
  profile_id: string;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
};

const PROFILE_COLUMNS = "id, name, locale, created_at, updated_at";
const KEY_COLUMNS = "profile_id, key, value, created_at, updated_at";

export async function profilesOfProject(q: Queryable, projectId: string): Promise<ProfileWithCount[]> {
  return q.all<ProfileWithCount>(
    `SELECT p.id, p.name, p.locale, p.created_at, p.updated_at,
            (SELECT CAST(COUNT(*) AS INTEGER) FROM i18n_keys k WHERE k.profile_id = p.id) AS key_count
       FROM i18n_profiles p WHERE p.project_id = ?`,
    projectId,
  );
}

/** By id, else by name, within the project only. */
export async function findProfile(q: Queryable, projectId: string, idOrName: string): Promise<ProfileRow | undefined> {
  return (await q.one<ProfileRow>(`SELECT ${PROFILE_COLUMNS} FROM i18n_profiles WHERE id = ? AND project_id = ?`, idOrName, projectId)) ?? profileByName(q, projectId, idOrName);
}

export async function profileByName(q: Queryable, projectId: string, name: string): Promise<ProfileRow | undefined> {
  return q.one<ProfileRow>(`SELECT ${PROFILE_COLUMNS} FROM i18n_profiles WHERE name = ? AND project_id = ?`, name, projectId);
}

export async function profileByLocale(q: Queryable, projectId: string, locale: string): Promise<ProfileRow | undefined> {
  return q.one<ProfileRow>(`SELECT ${PROFILE_COLUMNS} FROM i18n_profiles WHERE locale = ? AND project_id = ?`, locale, projectId);
}

export async function countKeys(q: Queryable, profileId: string): Promise<number> {
  const row = await q.one<{ n: number | string }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM i18n_keys WHERE profile_id = ?", profileId);
  return Number(row?.n ?? 0);
}

export async function insertProfile(q: Queryable, projectId: string, p: ProfileRow): Promise<void> {
  await q.run(
    `INSERT INTO i18n_profiles (${PROFILE_COLUMNS}, project_id) VALUES (?, ?, ?, ?, ?, ?)`,
    p.id,
    p.name,
    p.locale,
    p.created_at,
    p.updated_at,
    projectId,
  );
}

export async function updateProfile(q: Queryable, p: ProfileRow): Promise<void> {
  await q.run("UPDATE i18n_profiles SET name = ?, locale = ?, updated_at = ? WHERE id = ?", p.name, p.locale, p.updated_at, p.id);
}

/** The profile and its keys (explicitly: the cascade is the database's second line). Answers how many keys went. */
export async function deleteProfile(q: Queryable, id: string): Promise<number> {
  const keys = await q.run("DELETE FROM i18n_keys WHERE profile_id = ?", id);
  await q.run("DELETE FROM i18n_profiles WHERE id = ?", id);
  return keys;
}

export async function keysOfProfile(q: Queryable, profileId: string): Promise<KeyRow[]> {
  return q.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM i18n_keys WHERE profile_id = ?`, profileId);
}

export async function keysOfProject(q: Queryable, projectId: string): Promise<KeyRow[]> {
  return q.all<KeyRow>(`SELECT ${KEY_COLUMNS} FROM i18n_keys WHERE project_id = ?`, projectId);
}

/** What the snapshot publishes: every key with its profile's locale. */
export async function publishedKeys(q: Queryable, projectId: string): Promise<{ locale: string; key: string; value: string }[]> {
  return q.all(
    `SELECT p.locale AS locale, k.key AS key, k.value AS value
       FROM i18n_profiles p JOIN i18n_keys k ON k.profile_id = p.id
      WHERE p.project_id = ?`,
    projectId,
  );
}

export async function findKey(q: Queryable, profileId: string, key: string): Promise<KeyRow | undefined> {
  return q.one<KeyRow>(`SELECT ${KEY_COLUMNS} FROM i18n_keys WHERE profile_id = ? AND key = ?`, profileId, key);
}

/**
 * Multi-row statements take batches of 128, 64, ... 1 rows, so that a
 * statement's text is one of eight whatever the batch size (both engines
 * cache statements by text).
 */
function* batches<T>(items: T[]): Generator<T[]> {
  let at = 0;
  let size = 128;
  while (at < items.length) {
    while (size > items.length - at) size >>= 1;
    yield items.slice(at, at + size);
    at += size;
  }
}

/**
 * Inserts the keys a profile does not have yet; a key it has is left as it
 * is. Answers the keys inserted (the database says which: `ON CONFLICT DO
 * NOTHING RETURNING` returns only the rows it wrote).
 */
export async function insertKeysIfAbsent(
  q: Queryable,
  projectId: string,
  profileId: string,
  keys: { key: string; value: string }[],
  at: string,
): Promise<Set<string>> {
  const added = new Set<string>();
  for (const batch of batches(keys)) {
    const rows = await q.all<{ key: string }>(
      `INSERT INTO i18n_keys (${KEY_COLUMNS}, project_id) VALUES ${batch.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}
       ON CONFLICT (profile_id, key) DO NOTHING RETURNING key`,
      ...batch.flatMap((k) => [profileId, k.key, k.value, at, at, projectId]),
    );
    for (const r of rows) added.add(r.key);
  }
  return added;
}

export async function updateKeyValue(q: Queryable, profileId: string, key: string, value: string, at: string): Promise<void> {
  await q.run("UPDATE i18n_keys SET value = ?, updated_at = ? WHERE profile_id = ? AND key = ?", value, at, profileId, key);
}

export async function deleteKey(q: Queryable, profileId: string, key: string): Promise<number> {
  return q.run("DELETE FROM i18n_keys WHERE profile_id = ? AND key = ?", profileId, key);
}

/** The locale of every profile of the project (a profile without keys still publishes its locale). */
export async function profileLocales(q: Queryable, projectId: string): Promise<{ locale: string }[]> {
  return q.all<{ locale: string }>("SELECT locale FROM i18n_profiles WHERE project_id = ?", projectId);
}
