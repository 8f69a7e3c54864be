import { validation } from "./errors";

/** Refused in names and keys: they break logs, terminals and paths. */
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * Refused in names (of every resource, and of sub-switches, variants, rules,
 * keys and tokens), beyond CONTROL_CHARS: the C1 controls (U+0080-U+009F;
 * U+009B is a terminal's CSI), line and paragraph separators, and the
 * bidirectional formatting characters (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069), which make a name display as another
 * ("Trojan Source"). Free text (descriptions) may carry the bidi marks that
 * right-to-left writing needs; a name is an identifier and needs none.
 */
export const NAME_UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/** VALIDATION naming `field` and the character when a name holds one of NAME_UNSAFE_CHARS. */
export function checkNameChars(field: string, value: string): void {
  const bad = NAME_UNSAFE_CHARS.exec(value);
  if (!bad) return;
  const code = `U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
  throw validation(
    `${field} must not contain control or bidirectional formatting characters`,
    `${field}: ${code} is not allowed (control characters U+0000-U+001F and U+007F-U+009F, line separators, and bidi controls U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069 are refused in names)`,
  );
}

/**
 * The name rules every named resource shares (services check them, so every
 * caller gets them): a name usable in paths in place of the id is 1 to `max`
 * characters, has no `/`, no control characters and no surrounding
 * whitespace, and does not start with the id prefix (no name shadows an id).
 */
export function checkResourceName(name: string, rules: { max: number; idPrefix: string; slashReason: string }): void {
  if (name.length < 1 || name.length > rules.max) {
    throw validation(`name must be 1 to ${rules.max} characters`, `name: ${name.length} characters; allowed 1 to ${rules.max}`);
  }
  if (name.includes("/")) throw validation("name must not contain '/'", `name: ${rules.slashReason}`);
  checkNameChars("name", name);
  if (name.trim() !== name) throw validation("name must not start or end with whitespace", "name: remove leading and trailing whitespace");
  if (name.startsWith(rules.idPrefix)) {
    throw validation(`name must not start with ${rules.idPrefix}`, `name: the ${rules.idPrefix} prefix is reserved for ids`);
  }
}

/** A row limit of a history or activity read: an integer from 1 to `max`, else VALIDATION naming `limit`. */
export function checkLimit(limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw validation(`limit must be an integer from 1 to ${max}`, `limit: must be an integer from 1 to ${max}`);
  }
}

/** A free-text field (description, folder, ...): absent or null passes; else at most `max` characters and no control characters, else VALIDATION naming it. */
export function checkOptionalText(field: string, value: string | null | undefined, max: number): void {
  if (value === undefined || value === null) return;
  if (value.length > max) throw validation(`${field} must be at most ${max} characters`, `${field}: ${value.length} characters`);
  if (CONTROL_CHARS.test(value)) throw validation(`${field} must not contain control characters`, `${field}: control characters are not allowed`);
}
