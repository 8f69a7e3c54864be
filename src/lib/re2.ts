import type { RE2JS as RE2JSType } from "re2js";

let RE2JS: typeof RE2JSType | undefined;

/**
 * A pattern compiled by RE2 (re2js): matching runs in linear time whatever
 * the pattern and the text, so no rule or schema a person writes can stall
 * the server on a crafted value. Throws on a pattern RE2 does not accept.
 * re2js is loaded by the first pattern compiled, not at every server start.
 */
export function compileRegex(pattern: string): { test(value: string): boolean } {
  RE2JS ??= (require("re2js") as typeof import("re2js")).RE2JS;
  const re = RE2JS.compile(pattern);
  return { test: (value: string) => re.matcher(value).find() };
}
