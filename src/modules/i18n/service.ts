import { type AuditActor, recordAudit } from "../../lib/audit";
import { alreadyExists, notFound, validation } from "../../lib/errors";
import { filterByQuery } from "../../lib/http";
import { newId, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { bumpEveryEnv } from "../../lib/revisions";
import type { Queryable } from "../../lib/store";
import { checkResourceName } from "../../lib/validate";
import {
  type KeyRow,
  type ProfileRow,
  countKeys,
  deleteKey,
  deleteProfile,
  findKey,
  findProfile,
  insertKeysIfAbsent,
  insertProfile,
  keysOfProfile,
  keysOfProject,
  profileByLocale,
  profileByName,
  profileLocales,
  profilesOfProject,
  publishedKeys,
  updateKeyValue,
  updateProfile,
} from "./store";

/** Longest profile name. */
export const NAME_MAX = 128;
/** Longest locale tag accepted (RFC 5646 §4.4.1 asks implementations to take at least 35 characters). */
export const LOCALE_MAX = 35;
/** What a key is: letters, digits and `_ . : -`, 1 to 200 characters (`checkout.button.pay`, `errors:not_found`). */
export const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;
export const KEY_MAX = 200;
/** Longest value, in UTF-16 code units (JavaScript string length). */
export const VALUE_MAX = 10_000;
/** Keys one `POST /api/admin/i18n/keys` may carry. */
export const KEYS_PER_CALL = 1_000;
/** Keys one profile may hold: the snapshot every SDK loads carries them all. */
export const KEYS_PER_PROFILE = 10_000;

export const ACTIONS = {
  profileCreate: "i18n_profile.create",
  profileUpdate: "i18n_profile.update",
  profileDelete: "i18n_profile.delete",
  keysPush: "i18n_key.push",
  keyUpdate: "i18n_key.update",
  keyDelete: "i18n_key.delete",
} as const;

/** A profile as the API shows it. */
export type I18nProfile = {
  id: string;
  name: string;
  /** A canonical BCP 47 tag (`en`, `de-CH`, `zh-Hant-TW`), unique in the project. */
  locale: string;
  /** How many keys it holds. */
  keyCount: number;
  createdAt: string;
  updatedAt: string;
};

/** A key as the API shows it, with its profile and that profile's locale. */
export type I18nKey = {
  profile_id: string;
  locale: string;
  key: string;
  value: string;
  createdAt: string;
  updatedAt: string;
};

export type PushResult = { added: string[]; skipped: string[]; pushed_count: number; skipped_count: number };
export type PushInput = { profile_id: string; keys: { key: string; value: string }[] };
export type ProfileInput = { name: string; locale: string };
export type ProfilePatch = { name?: string; locale?: string };

/** `{ "<locale>": { "<key>": "value" } }`, what the snapshot's `translations` section holds. */
export type PublishedTranslations = Record<string, Record<string, string>>;

/** The one lock of a project's translations: every profile and key write. */
export function lockScope(projectId: string): string {
  return `i18n:${projectId}`;
}

export function checkName(name: string): void {
  checkResourceName(name, { max: NAME_MAX, idPrefix: "i18n_", slashReason: "'/' is not allowed in names used in paths" });
}

/**
 * A BCP 47 language tag, canonicalised by `Intl.getCanonicalLocales`
 * (`en-us` → `en-US`, `zh-hant-tw` → `zh-Hant-TW`). Anything else is
 * VALIDATION naming `field`, with a hint for the usual slips (`en_US`).
 */
export function canonicalLocale(input: unknown, field = "locale"): string {
  const rule = "a BCP 47 language tag such as en, de-CH, pt-BR or zh-Hant-TW";
  if (typeof input !== "string" || input.length === 0) throw validation(`${field} must be a language tag`, `${field}: expected ${rule}`);
  if (input.length > LOCALE_MAX) throw validation(`${field} must be at most ${LOCALE_MAX} characters`, `${field}: ${input.length} characters, expected ${rule}`);
  const shown = JSON.stringify(input);
  if (input.includes("_")) {
    throw validation(`${shown} is not a BCP 47 language tag`, `${field}: subtags are separated by '-', not '_' (${input.replaceAll("_", "-")}), expected ${rule}`);
  }
  let canonical: string[];
  try {
    canonical = Intl.getCanonicalLocales(input);
  } catch {
    throw validation(`${shown} is not a BCP 47 language tag`, `${field}: expected ${rule}`);
  }
  if (canonical.length !== 1 || canonical[0]!.length > LOCALE_MAX) throw validation(`${shown} is not a BCP 47 language tag`, `${field}: expected ${rule}`);
  return canonical[0]!;
}

/** C0 controls and DEL, except tab, line feed and carriage return (translations may span lines). */
const VALUE_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** A UTF-16 surrogate without its pair: no database stores it as given. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const KEY_RULE = `1 to ${KEY_MAX} of A-Z a-z 0-9 _ . : - (e.g. checkout.button.pay)`;

/** Why `key` is not a key, or null. */
function keyProblem(key: unknown): string | null {
  if (typeof key !== "string") return `must be a string (${KEY_RULE})`;
  if (key.length === 0) return `is empty (expected ${KEY_RULE})`;
  if (key.length > KEY_MAX) return `${key.length} characters (expected ${KEY_RULE})`;
  if (!KEY_PATTERN.test(key)) {
    const bad = [...key].find((c) => !/[A-Za-z0-9_.:-]/.test(c))!;
    const shown = /^[\u0021-\u007e]$/.test(bad) ? `'${bad}'` : `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    return `${JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key)} has ${shown} (expected ${KEY_RULE})`;
  }
  return null;
}

/** Why `value` is not a value, or null. */
function valueProblem(value: unknown): string | null {
  if (typeof value !== "string") return "must be a string";
  if (value.length > VALUE_MAX) return `${value.length} characters, at most ${VALUE_MAX.toLocaleString("en")}`;
  if (VALUE_CONTROL.test(value)) return "control characters other than tab and line breaks are not allowed";
  if (LONE_SURROGATE.test(value)) return "holds an unpaired UTF-16 surrogate (not valid Unicode text)";
  return null;
}

/** A key of a path or a call: VALIDATION naming `field` when it is not one. */
export function checkKey(key: unknown, field = "key"): string {
  const problem = keyProblem(key);
  if (problem) throw validation("Not a valid translation key", `${field}: ${problem}`);
  return key as string;
}

export function checkValue(value: unknown, field = "value"): string {
  const problem = valueProblem(value);
  if (problem) throw validation("Not a valid translation value", `${field}: ${problem}`);
  return value as string;
}

/**
 * The keys of one push, checked whole before anything is written: at most
 * 1,000, each key and value valid, and each key once (a key twice in one
 * call is refused, naming both places: which value was meant is not ours to
 * guess). Every problem found is named, up to 20, `keys.3.key: …`.
 */
export function checkPushKeys(keys: unknown): { key: string; value: string }[] {
  if (!Array.isArray(keys)) throw validation("keys must be an array", "keys: expected an array of {key, value}");
  if (keys.length > KEYS_PER_CALL) {
    throw validation(`At most ${KEYS_PER_CALL.toLocaleString("en")} keys per call`, `keys: ${keys.length.toLocaleString("en")} items, at most ${KEYS_PER_CALL.toLocaleString("en")} per call (svc i18n keys push splits a file for you)`);
  }
  const problems: string[] = [];
  const first = new Map<string, number>();
  keys.forEach((item, i) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      problems.push(`keys.${i}: expected {key, value}`);
      return;
    }
    const { key, value } = item as { key?: unknown; value?: unknown };
    const k = keyProblem(key);
    if (k) problems.push(`keys.${i}.key: ${k}`);
    const v = valueProblem(value);
    if (v) problems.push(`keys.${i}.value: ${v}`);
    if (!k) {
      const seen = first.get(key as string);
      if (seen === undefined) first.set(key as string, i);
      else problems.push(`keys.${i}.key: ${JSON.stringify(key)} is also keys.${seen} (send each key once per call)`);
    }
  });
  if (problems.length > 0) {
    const more = problems.length > 20 ? `; (and ${problems.length - 20} more)` : "";
    throw validation(`${problems.length} of the keys ${problems.length === 1 ? "is" : "are"} not valid; nothing was written`, problems.slice(0, 20).join("; ") + more);
  }
  return keys as { key: string; value: string }[];
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function toProfile(r: ProfileRow, keyCount: number): I18nProfile {
  return { id: r.id, name: r.name, locale: r.locale, keyCount, createdAt: r.created_at, updatedAt: r.updated_at };
}

function toKey(r: KeyRow, locale: string): I18nKey {
  return { profile_id: r.profile_id, locale, key: r.key, value: r.value, createdAt: r.created_at, updatedAt: r.updated_at };
}

/** An audit detail's copy of a value: long ones are cut (the audit row is small facts, not the text). */
const brief = (value: string) => (value.length > 200 ? `${value.slice(0, 200)}…` : value);

const duplicateName = (name: string) => alreadyExists(`A translation profile named ${name} already exists in this project`, "name: choose another name");
const duplicateLocale = (locale: string, holder: string) =>
  alreadyExists(`Locale ${locale} already has a profile in this project (${holder})`, `locale: ${locale} belongs to profile ${holder} (a project has one profile per locale)`);

/**
 * Translations: profiles (one per locale, each with a name) and their keys.
 * Keys are pushed insert-only (`push`: a key the profile has is left as it
 * is) and changed one at a time (`updateKey`). Every write is one
 * transaction under the project's i18n lock that records its audit row and,
 * when it changes what is published, bumps every env's revision: the
 * snapshot of every env carries the same `translations` (when the project's
 * `moduleTranslations` is on).
 */
export class I18nService {
  constructor(private readonly ctx: ServiceContext) {}

  // ------------------------------------------------------------ profiles

  async listProfiles(projectId: string, q?: string): Promise<I18nProfile[]> {
    const rows = (await profilesOfProject(this.ctx.store, projectId)).map((r) => toProfile(r, Number(r.key_count)));
    rows.sort((a, b) => compare(a.name, b.name));
    return filterByQuery(rows, q, (p) => [p.name, p.locale]);
  }

  async getProfile(projectId: string, idOrName: string): Promise<I18nProfile> {
    const row = await this.findProfile(this.ctx.store, projectId, idOrName);
    return toProfile(row, await countKeys(this.ctx.store, row.id));
  }

  async createProfile(projectId: string, input: ProfileInput, actor: AuditActor): Promise<I18nProfile> {
    checkName(input.name);
    const locale = canonicalLocale(input.locale);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        if (await profileByName(tx, projectId, input.name)) throw duplicateName(input.name);
        const holder = await profileByLocale(tx, projectId, locale);
        if (holder) throw duplicateLocale(locale, holder.name);
        const now = nowIso();
        const row: ProfileRow = { id: newId("i18n"), name: input.name, locale, created_at: now, updated_at: now };
        await insertProfile(tx, projectId, row);
        await recordAudit(tx, { projectId, action: ACTIONS.profileCreate, subjectId: row.id, subjectName: row.name, actor, detail: { locale } });
        await bumpEveryEnv(tx, projectId);
        return toProfile(row, 0);
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw await this.conflictOf(projectId, input.name, locale);
      throw err;
    }
  }

  /**
   * Renames a profile or gives it another locale (its keys move with it:
   * SDKs find them under the new locale). Fields not sent stay; nothing
   * different from what is stored writes nothing.
   */
  async updateProfile(projectId: string, idOrName: string, patch: ProfilePatch, actor: AuditActor): Promise<I18nProfile> {
    if (patch.name !== undefined) checkName(patch.name);
    const locale = patch.locale === undefined ? undefined : canonicalLocale(patch.locale);
    try {
      return await this.ctx.store.write(async (tx) => {
        await tx.lock(lockScope(projectId));
        const row = await this.findProfile(tx, projectId, idOrName);
        const next: ProfileRow = { ...row, name: patch.name ?? row.name, locale: locale ?? row.locale };
        const fields = (["name", "locale"] as const).filter((f) => next[f] !== row[f]);
        if (fields.length === 0) return toProfile(row, await countKeys(tx, row.id));
        if (next.name !== row.name && (await profileByName(tx, projectId, next.name))) throw duplicateName(next.name);
        if (next.locale !== row.locale) {
          const holder = await profileByLocale(tx, projectId, next.locale);
          if (holder) throw duplicateLocale(next.locale, holder.name);
        }
        next.updated_at = nowIso();
        await updateProfile(tx, next);
        const pick = (r: ProfileRow) => Object.fromEntries(fields.map((f) => [f, r[f]]));
        await recordAudit(tx, { projectId, action: ACTIONS.profileUpdate, subjectId: row.id, subjectName: next.name, actor, detail: { fields, before: pick(row), after: pick(next) } });
        if (next.locale !== row.locale) await bumpEveryEnv(tx, projectId);
        return toProfile(next, await countKeys(tx, row.id));
      });
    } catch (err) {
      if (this.ctx.store.isUniqueViolation(err)) throw await this.conflictOf(projectId, patch.name, locale);
      throw err;
    }
  }

  /** Deletes a profile and every key in it. */
  async removeProfile(projectId: string, idOrName: string, actor: AuditActor): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const row = await this.findProfile(tx, projectId, idOrName);
      const keys = await deleteProfile(tx, row.id);
      await recordAudit(tx, { projectId, action: ACTIONS.profileDelete, subjectId: row.id, subjectName: row.name, actor, detail: { locale: row.locale, keys } });
      await bumpEveryEnv(tx, projectId);
    });
  }

  // ------------------------------------------------------------ keys

  /**
   * Keys of one profile (`profileRef`: its id or name), or of every profile
   * of the project; `q` filters over key and value (case-insensitive). By
   * key, then locale.
   */
  async listKeys(projectId: string, options: { profile?: string; q?: string } = {}): Promise<I18nKey[]> {
    const { store } = this.ctx;
    let keys: I18nKey[];
    if (options.profile !== undefined) {
      const profile = await this.findProfile(store, projectId, options.profile, "profile_id");
      keys = (await keysOfProfile(store, profile.id)).map((r) => toKey(r, profile.locale));
    } else {
      const locales = new Map((await profilesOfProject(store, projectId)).map((p) => [p.id, p.locale]));
      keys = (await keysOfProject(store, projectId)).flatMap((r) => (locales.has(r.profile_id) ? [toKey(r, locales.get(r.profile_id)!)] : []));
    }
    keys.sort((a, b) => compare(a.key, b.key) || compare(a.locale, b.locale));
    return filterByQuery(keys, options.q, (k) => [k.key, k.value]);
  }

  /**
   * SPEC "i18n keys": insert-only. Keys the profile does not have are added;
   * keys it has are left untouched and reported as skipped (both in the
   * order sent). The whole call is checked first and is one transaction:
   * all of it or nothing. Two identical pushes at once add each key once
   * (the second finds them and skips them).
   */
  async push(projectId: string, input: PushInput, actor: AuditActor): Promise<PushResult> {
    const keys = checkPushKeys(input.keys);
    if (typeof input.profile_id !== "string" || input.profile_id.length === 0) throw validation("profile_id is required", "profile_id: the id (or name) of a translation profile");
    if (keys.length === 0) {
      await this.findProfile(this.ctx.store, projectId, input.profile_id, "profile_id");
      return { added: [], skipped: [], pushed_count: 0, skipped_count: 0 };
    }
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const profile = await this.findProfile(tx, projectId, input.profile_id, "profile_id");
      const inserted = await insertKeysIfAbsent(tx, projectId, profile.id, keys, nowIso());
      const added = keys.filter((k) => inserted.has(k.key)).map((k) => k.key);
      const skipped = keys.filter((k) => !inserted.has(k.key)).map((k) => k.key);
      if (added.length > 0) {
        const total = await countKeys(tx, profile.id);
        if (total > KEYS_PER_PROFILE) {
          throw validation(
            `Profile ${profile.name} would hold ${total.toLocaleString("en")} keys; at most ${KEYS_PER_PROFILE.toLocaleString("en")}`,
            `keys: ${added.length.toLocaleString("en")} new keys over the ${KEYS_PER_PROFILE.toLocaleString("en")} a profile may hold (it has ${(total - added.length).toLocaleString("en")}), nothing was written`,
          );
        }
        await recordAudit(tx, {
          projectId,
          action: ACTIONS.keysPush,
          subjectId: profile.id,
          subjectName: profile.name,
          actor,
          detail: { locale: profile.locale, added: added.length, skipped: skipped.length, keys: added.slice(0, 50) },
        });
        await bumpEveryEnv(tx, projectId);
      }
      return { added, skipped, pushed_count: added.length, skipped_count: skipped.length };
    });
  }

  /** Sets the value of a key the profile has (404 otherwise: adding is `push`). The same value writes nothing. */
  async updateKey(projectId: string, profileRef: string, key: string, value: string, actor: AuditActor): Promise<I18nKey> {
    checkKey(key);
    checkValue(value);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const profile = await this.findProfile(tx, projectId, profileRef, "profile_id");
      const row = await this.findKey(tx, profile, key);
      if (row.value === value) return toKey(row, profile.locale);
      const now = nowIso();
      await updateKeyValue(tx, profile.id, key, value, now);
      await recordAudit(tx, {
        projectId,
        action: ACTIONS.keyUpdate,
        subjectId: profile.id,
        subjectName: key,
        actor,
        detail: { profile: profile.name, locale: profile.locale, key, before: brief(row.value), after: brief(value) },
      });
      await bumpEveryEnv(tx, projectId);
      return toKey({ ...row, value, updated_at: now }, profile.locale);
    });
  }

  async removeKey(projectId: string, profileRef: string, key: string, actor: AuditActor): Promise<void> {
    checkKey(key);
    await this.ctx.store.write(async (tx) => {
      await tx.lock(lockScope(projectId));
      const profile = await this.findProfile(tx, projectId, profileRef, "profile_id");
      const row = await this.findKey(tx, profile, key);
      await deleteKey(tx, profile.id, key);
      await recordAudit(tx, {
        projectId,
        action: ACTIONS.keyDelete,
        subjectId: profile.id,
        subjectName: key,
        actor,
        detail: { profile: profile.name, locale: profile.locale, key, value: brief(row.value) },
      });
      await bumpEveryEnv(tx, projectId);
    });
  }

  // ------------------------------------------------------------ publishing

  /**
   * The snapshot's `translations` section, the same on every env:
   * `{ "<locale>": { "<key>": "value" } }` over every profile (one without
   * keys publishes `{}`), locales and keys sorted; `{}` when the project's
   * `moduleTranslations` is off. Objects without a prototype: `__proto__` is
   * a valid key.
   */
  async published(projectId: string): Promise<PublishedTranslations> {
    const out: PublishedTranslations = Object.create(null);
    const project = await this.ctx.services.projects.find(projectId);
    if (!project?.moduleTranslations) return out;
    const locales = (await profileLocales(this.ctx.store, projectId)).map((p) => p.locale).sort(compare);
    for (const locale of locales) out[locale] = Object.create(null);
    const rows = await publishedKeys(this.ctx.store, projectId);
    rows.sort((a, b) => compare(a.key, b.key));
    for (const r of rows) {
      const bucket = out[r.locale];
      if (bucket) bucket[r.key] = r.value;
    }
    return out;
  }

  private async findProfile(q: Queryable, projectId: string, idOrName: string, field?: string): Promise<ProfileRow> {
    const row = await findProfile(q, projectId, idOrName);
    if (!row) throw notFound(`Translation profile ${idOrName} not found`, field ? `${field}: no profile with this id or name in the project` : undefined);
    return row;
  }

  private async findKey(q: Queryable, profile: ProfileRow, key: string): Promise<KeyRow> {
    const row = await findKey(q, profile.id, key);
    if (!row) throw notFound(`Key ${key} not found in profile ${profile.name}`, `key: add it with POST /api/admin/i18n/keys`);
    return row;
  }

  /** A unique violation another server's write won (the lock makes it rare): which rule it broke. */
  private async conflictOf(projectId: string, name: string | undefined, locale: string | undefined) {
    if (name !== undefined && (await profileByName(this.ctx.store, projectId, name))) return duplicateName(name);
    const holder = locale === undefined ? undefined : await profileByLocale(this.ctx.store, projectId, locale);
    return holder ? duplicateLocale(locale!, holder.name) : alreadyExists("A translation profile with this name or locale already exists", "name: taken, or its locale is");
  }
}
