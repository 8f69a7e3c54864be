/**
 * Translation lookup over the snapshot's `translations` section
 * (`{ "<locale>": { "<key>": "value" } }`, locales as canonical BCP 47 tags).
 * Shared by the client's `t(key)`; no dependencies.
 */

/** What the snapshot publishes: per locale, per key, the text. */
export type Translations = Record<string, Record<string, string>>;

export type TranslateOptions = {
  /** The locale wanted (a BCP 47 tag: `de-CH`, `de_CH` and `de-ch` are the same). Default: the client's `locale`. */
  locale?: string;
  /** Where to look when the locale (and its parents) lack the key. Default: the client's `fallbackLocale`, else `en`. */
  fallbackLocale?: string;
  /** Values for `{name}` placeholders; a placeholder without one stays as written. */
  vars?: Record<string, string | number | boolean>;
};

export const DEFAULT_FALLBACK_LOCALE = "en";

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** The locales of a section by their lower-case tag, built once per section. */
const indexes = new WeakMap<object, Map<string, Record<string, string>>>();

function indexOf(translations: Translations): Map<string, Record<string, string>> {
  let index = indexes.get(translations);
  if (!index) {
    index = new Map();
    for (const locale of Object.keys(translations)) {
      const keys = translations[locale];
      if (keys && typeof keys === "object") index.set(locale.toLowerCase(), keys);
    }
    indexes.set(translations, index);
  }
  return index;
}

/**
 * The locales looked at, in order (RFC 4647 "lookup"): the tag, then each
 * shorter prefix of it (`de-CH-1996` → `de-CH` → `de`; a single-letter
 * subtag such as `-x-` or `-u-` goes with the one after it), then the same
 * for the fallback. Lower case, `_` read as `-`, each once.
 */
export function localeChain(locale: string | undefined, fallbackLocale: string): string[] {
  const out: string[] = [];
  const add = (tag: string | undefined) => {
    if (!tag) return;
    let subtags = tag.trim().replace(/_/g, "-").toLowerCase().split("-").filter(Boolean);
    while (subtags.length > 0) {
      const candidate = subtags.join("-");
      if (!out.includes(candidate)) out.push(candidate);
      subtags = subtags.slice(0, -1);
      while (subtags.length > 1 && subtags[subtags.length - 1]!.length === 1) subtags = subtags.slice(0, -1);
    }
  };
  add(locale);
  add(fallbackLocale);
  return out;
}

/** `{name}` placeholders filled from `vars` (own properties only); others stay as written. */
export function interpolate(text: string, vars: Record<string, string | number | boolean> | undefined): string {
  if (!vars) return text;
  return text.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name: string) => (hasOwn(vars, name) ? String(vars[name]) : whole));
}

/**
 * The text of `key`: from the locale, its parents, then the fallback locale
 * and its parents; the key itself when none has it (so a missing
 * translation shows, and never crashes a page). `vars` fill `{name}`
 * placeholders.
 */
export function translate(translations: Translations | null | undefined, key: string, options: TranslateOptions = {}): string {
  let text: string | undefined;
  if (translations && typeof translations === "object") {
    const index = indexOf(translations);
    for (const locale of localeChain(options.locale, options.fallbackLocale ?? DEFAULT_FALLBACK_LOCALE)) {
      const keys = index.get(locale);
      if (keys && hasOwn(keys, key) && typeof keys[key] === "string") {
        text = keys[key];
        break;
      }
    }
  }
  return text === undefined ? key : interpolate(text, options.vars);
}
