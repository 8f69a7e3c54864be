import { readFileSync } from "node:fs";
import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { KeySchema, ProfileSchema, PushResultSchema } from "./contract";
import type { i18nRoutes } from "./routes";
import { ApiRequestError, type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, emit, openClient, str, table, when, deleteCommand } from "../../cli/client-command";
import type { ArgValues, Command } from "../../cli/command";

type I18nProfile = Static<typeof ProfileSchema>;
type I18nKey = Static<typeof KeySchema>;
type PushResult = Static<typeof PushResultSchema>;

/** The translation routes, typed from their own schemas. */
const i18n = (client: SvcClient) => client.api<ReturnType<typeof i18nRoutes>>().api.admin.i18n;

/** The server's rules (src/modules/i18n/service.ts), checked here first so a file's problems are named by key before anything is sent. */
const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;
const VALUE_MAX = 10_000;
/** What one push request carries at most: the server takes 1,000 keys, and 1 MB bodies by default. */
const BATCH_KEYS = 1_000;
const BATCH_BYTES = 512 * 1024;

const n = (x: number) => x.toLocaleString("en");
const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`;

/** One line of a value, for tables: line breaks shown as ⏎. */
const oneLine = (value: string) => value.replace(/\r?\n/g, " ⏎ ");

function profileText(p: I18nProfile): string {
  return [`${p.name} (${p.id})`, `  locale:  ${p.locale}`, `  keys:    ${n(p.keyCount)}`, `  created: ${when(p.createdAt)}`, `  updated: ${when(p.updatedAt)}`].join("\n");
}

/** A profile by id or name (404 from the server when there is none). */
async function resolveProfile(client: SvcClient, ref: string): Promise<I18nProfile> {
  return dataOf(i18n(client).profiles({ id: seg(ref) }).get());
}

/**
 * The keys of a push file: a JSON object of `key: "value"`. Nested objects
 * are flattened with dots (`{"checkout": {"pay": "…"}}` is `checkout.pay`),
 * as i18next-style files nest them. Every value must be a string; the keys
 * and values are checked against the server's rules, all problems at once.
 */
export function keysOfFile(data: unknown, source: string): { key: string; value: string }[] {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new UsageError(`${source} must hold a JSON object of "key": "value" (nested objects are joined with dots), got ${Array.isArray(data) ? "an array" : data === null ? "null" : typeof data}`);
  }
  const out: { key: string; value: string }[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [name, value] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${name}` : name;
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        walk(value as Record<string, unknown>, key);
        continue;
      }
      if (typeof value !== "string") problems.push(`${key}: the value must be a string, got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`);
      else if (!KEY_PATTERN.test(key)) problems.push(`${JSON.stringify(key)}: keys are 1 to 200 of A-Z a-z 0-9 _ . : -`);
      else if (value.length > VALUE_MAX) problems.push(`${key}: the value has ${n(value.length)} characters, at most ${n(VALUE_MAX)}`);
      else if (seen.has(key)) problems.push(`${key}: given twice (once nested, once with dots)`);
      else {
        seen.add(key);
        out.push({ key, value });
      }
    }
  };
  walk(data as Record<string, unknown>, "");
  if (problems.length > 0) {
    const shown = problems.slice(0, 10).map((p) => `  ${p}`).join("\n");
    throw new UsageError(`${source}: ${plural(problems.length, "problem")}, nothing was sent:\n${shown}${problems.length > 10 ? `\n  … and ${n(problems.length - 10)} more` : ""}`);
  }
  return out;
}

async function readSource(file: string): Promise<string> {
  if (file === "-") return await Bun.stdin.text();
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Batches under the server's limits: at most 1,000 keys and about 512 KB of JSON each. */
export function batchesOf(keys: { key: string; value: string }[]): { key: string; value: string }[][] {
  const out: { key: string; value: string }[][] = [];
  let batch: { key: string; value: string }[] = [];
  let bytes = 0;
  for (const k of keys) {
    const size = Buffer.byteLength(JSON.stringify(k), "utf8") + 1;
    if (batch.length > 0 && (batch.length >= BATCH_KEYS || bytes + size > BATCH_BYTES)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(k);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

const profileFlag = (values: ArgValues) => str(values, "locale");

const profilesSubcommands: Command[] = [
  {
    name: "profiles list",
    summary: "List the translation profiles: name, locale, how many keys",
    examples: ["svc i18n profiles list", "svc i18n profiles list --query de --json"],
    flags: { query: { ...QUERY_FLAG, help: "Only profiles whose name or locale contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
    async run({ values }) {
      const q = str(values, "query");
      const all = await dataOf(i18n(openClient(values)).profiles.get({ query: { q: q || undefined } }));
      emit(values.json, all, () => {
        if (all.length === 0) return q ? `No translation profiles match "${q}".` : "No translation profiles yet; create one with `svc i18n profiles create <name> --locale <tag>`.";
        return table(
          ["NAME", "LOCALE", "KEYS", "UPDATED"],
          all.map((p) => [p.name, p.locale, n(p.keyCount), when(p.updatedAt)]),
        );
      });
      return 0;
    },
  },
  {
    name: "profiles get",
    summary: "Show one translation profile",
    args: ["<profile>"],
    examples: ["svc i18n profiles get web-de", "svc i18n profiles get i18n_… --json"],
    flags: { ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const p = await resolveProfile(openClient(values), positionals[0]!);
      emit(values.json, p, () => profileText(p));
      return 0;
    },
  },
  {
    name: "profiles create",
    summary: "Create a translation profile for one locale (--json prints its record)",
    args: ["<name>"],
    details: ["--locale is a BCP 47 tag (en, de-CH, pt-BR, zh-Hant-TW), stored in its canonical form; a project has one profile per locale."],
    examples: ["svc i18n profiles create web-de --locale de", "svc i18n profiles create swiss --locale de-CH --json"],
    flags: { locale: { type: "string", value: "TAG", help: "The profile's locale, a BCP 47 tag such as en or de-CH (required)" }, ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const locale = profileFlag(values);
      if (locale === undefined) throw new UsageError("--locale TAG is required, e.g. --locale de-CH");
      const p = await dataOf(i18n(openClient(values)).profiles.post({ name: positionals[0]!, locale }));
      emit(values.json, p, () => `Created translation profile ${p.name} (${p.id}) for locale ${p.locale}.`);
      return 0;
    },
  },
  {
    name: "profiles update",
    summary: "Rename a translation profile or change its locale (its keys move with it)",
    args: ["<profile>"],
    examples: ["svc i18n profiles update web-de --rename web-german", "svc i18n profiles update swiss --locale de-AT --json"],
    flags: {
      rename: { type: "string", value: "NAME", help: "A new name for the profile (unique in the project)" },
      locale: { type: "string", value: "TAG", help: "A new locale (SDKs then find the keys under it)" },
      ...CLIENT_FLAGS,
    },
    async run({ values, positionals }) {
      const body: { name?: string; locale?: string } = {};
      const rename = str(values, "rename");
      if (rename !== undefined) body.name = rename;
      const locale = profileFlag(values);
      if (locale !== undefined) body.locale = locale;
      if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give --rename NAME or --locale TAG");
      const p = await dataOf(i18n(openClient(values)).profiles({ id: seg(positionals[0]!) }).patch(body));
      emit(values.json, p, () => `Updated translation profile ${p.name}:\n${profileText(p).split("\n").slice(1).join("\n")}`);
      return 0;
    },
  },
  deleteCommand({
    name: "profiles delete",
    summary: "Delete a translation profile and all its keys",
    args: ["<profile>"],
    examples: ["svc i18n profiles delete old-de", "svc i18n profiles delete old-de --yes --json"],
    target: async (client, positionals) => await resolveProfile(client, positionals[0]!),
    question: (p) => `Delete translation profile ${p.name} (${p.locale}) and its ${plural(p.keyCount, "key")}?`,
    remove: async (client, p) => await dataOf(i18n(client).profiles({ id: seg(p.id) }).delete()),
    done: (p) => [{ id: p.id, name: p.name, locale: p.locale, deleted: true, keys: p.keyCount }, `Deleted translation profile ${p.name} (${p.locale}) and its ${plural(p.keyCount, "key")}.`],
  }),
];

const keysSubcommands: Command[] = [
  {
    name: "keys list",
    summary: "List the keys of a profile (or of every profile) with their values",
    args: ["[<profile>]"],
    examples: ["svc i18n keys list web-de", "svc i18n keys list web-de --query checkout", "svc i18n keys list --query pay --json"],
    flags: { query: { ...QUERY_FLAG, help: "Only keys whose key or value contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const profile = positionals[0];
      const q = str(values, "query");
      const all = await dataOf(i18n(openClient(values)).keys.get({ query: { profile_id: profile, q: q || undefined } }));
      emit(values.json, all, () => {
        if (all.length === 0) return q ? `No keys match "${q}".` : profile ? `No keys in ${profile} yet; add some with \`svc i18n keys push ${profile} FILE.json\`.` : "No keys yet.";
        const rows = all.map((k) => (profile ? [k.key, oneLine(k.value)] : [k.locale, k.key, oneLine(k.value)]));
        return table(profile ? ["KEY", "VALUE"] : ["LOCALE", "KEY", "VALUE"], rows, { full: ["KEY"] });
      });
      return 0;
    },
  },
  {
    name: "keys push",
    summary: "Add the keys of a JSON file to a profile, insert-only (keys it has keep their value)",
    args: ["<profile>", "<file>"],
    details: [
      'FILE holds a JSON object of "key": "value"; nested objects are joined with dots ({"checkout": {"pay": "Pay"}} is checkout.pay). `-` reads standard input.',
      `Keys are 1 to 200 of A-Z a-z 0-9 _ . : -; values are strings of at most ${n(VALUE_MAX)} characters: the whole file is checked before anything is sent.`,
      `It is sent in batches (at most ${n(BATCH_KEYS)} keys or 512 KB each), with progress on stderr. Keys the profile already has are skipped, never changed (use \`svc i18n keys set\`), so running it again after a failure is safe.`,
    ],
    examples: ["svc i18n keys push web-de locales/de.json", "cat de.json | svc i18n keys push web-de - --json"],
    flags: { ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const [ref, file] = positionals as [string, string];
      const source = file === "-" ? "standard input" : file;
      let data: unknown;
      const text = await readSource(file);
      try {
        data = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`${source} is not JSON: ${(err as Error).message}`);
      }
      const keys = keysOfFile(data, source);
      const client = openClient(values);
      const profile = await resolveProfile(client, ref);
      const batches = batchesOf(keys);
      const total: PushResult = { added: [], skipped: [], pushed_count: 0, skipped_count: 0 };
      const progress = !values.json && batches.length > 1;
      let sent = 0;
      for (const batch of batches) {
        let r: PushResult;
        try {
          r = await dataOf(i18n(client).keys.post({ profile_id: profile.id, keys: batch }));
        } catch (err) {
          if (sent > 0 && err instanceof ApiRequestError) {
            err.message = `${err.message} (after ${n(sent)} of ${n(keys.length)} keys were pushed: ${n(total.pushed_count)} added, ${n(total.skipped_count)} skipped; pushing again skips those)`;
          }
          throw err;
        }
        total.added.push(...r.added);
        total.skipped.push(...r.skipped);
        total.pushed_count += r.pushed_count;
        total.skipped_count += r.skipped_count;
        sent += batch.length;
        if (progress) process.stderr.write(`pushed ${n(sent)}/${n(keys.length)} keys (${n(total.pushed_count)} added, ${n(total.skipped_count)} skipped)\n`);
      }
      emit(values.json, total, () => {
        const lines = [`Pushed ${plural(keys.length, "key")} to ${profile.name} (${profile.locale}): ${n(total.pushed_count)} added, ${n(total.skipped_count)} skipped (already there, left unchanged).`];
        if (total.skipped_count > 0 && total.skipped_count <= 20) lines.push(`Skipped: ${total.skipped.join(", ")}`);
        if (total.skipped_count > 0) lines.push(`To change a key's value: svc i18n keys set ${profile.name} KEY VALUE`);
        return lines.join("\n");
      });
      return 0;
    },
  },
  {
    name: "keys set",
    summary: "Set one key's value in a profile (added when the profile lacks it)",
    args: ["<profile>", "<key>", "<value>"],
    examples: ['svc i18n keys set web-de checkout.pay "Jetzt bezahlen"', 'svc i18n keys set web-de checkout.greeting "Hallo {name}!" --json'],
    flags: { ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const [ref, key, value] = positionals as [string, string, string];
      const client = openClient(values);
      const profile = await resolveProfile(client, ref);
      let result: I18nKey | undefined;
      let added = false;
      for (let attempt = 0; attempt < 3 && !result; attempt++) {
        try {
          result = await dataOf(i18n(client).keys({ key: seg(key) }).patch({ value }, { query: { profile_id: profile.id } }));
        } catch (err) {
          if (!(err instanceof ApiRequestError && err.status === 404)) throw err;
          // The profile exists (resolved above): the key does not. Add it; when another client added it meanwhile, set it again.
          const pushed = await dataOf(i18n(client).keys.post({ profile_id: profile.id, keys: [{ key, value }] }));
          if (pushed.pushed_count === 1) {
            added = true;
            const listed = await dataOf(i18n(client).keys.get({ query: { profile_id: profile.id, q: key.slice(0, 100) } }));
            result = listed.find((k) => k.key === key);
          }
        }
      }
      if (!result) throw new UsageError(`could not set ${key}: it kept changing under us; try again`);
      const r = result;
      emit(values.json, r, () => `${added ? "Added" : "Set"} ${r.key} in ${profile.name} (${profile.locale}): ${oneLine(r.value)}`);
      return 0;
    },
  },
  deleteCommand({
    name: "keys delete",
    summary: "Delete one key of a profile",
    args: ["<profile>", "<key>"],
    examples: ["svc i18n keys delete web-de checkout.old", "svc i18n keys delete web-de checkout.old --yes --json"],
    target: async (client, positionals) => ({ profile: await resolveProfile(client, positionals[0]!), key: positionals[1]! }),
    question: ({ profile, key }) => `Delete key ${key} of ${profile.name} (${profile.locale})?`,
    remove: async (client, { profile, key }) => await dataOf(i18n(client).keys({ key: seg(key) }).delete(undefined, { query: { profile_id: profile.id } })),
    done: ({ profile, key }) => [{ profile_id: profile.id, locale: profile.locale, key, deleted: true }, `Deleted ${key} from ${profile.name} (${profile.locale}).`],
  }),
];

export const i18nCommand: Command = {
  name: "i18n",
  summary: "Translations: profiles (one per locale) and their keys: list, push a JSON file, set, delete",
  details: [
    "A profile holds one locale's keys. SDKs read them from the snapshot (`t(key)`, with a fallback locale) while the project's translations module is on.",
  ],
  examples: ["svc i18n profiles create web-de --locale de", "svc i18n keys push web-de locales/de.json", 'svc i18n keys set web-de checkout.pay "Jetzt bezahlen"', "svc i18n keys list web-de --query checkout"],
  subcommands: [...profilesSubcommands, ...keysSubcommands],
};
