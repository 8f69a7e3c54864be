import type { RE2JS as RE2JSType } from "re2js";

let RE2JS: typeof RE2JSType | undefined;

function re2(): typeof RE2JSType {
  RE2JS ??= (require("./re2-engine") as typeof import("./re2-engine")).RE2JS;
  return RE2JS;
}

/**
 * A pattern compiled by RE2 (re2js): matching runs in linear time whatever
 * the pattern and the text, so no rule or schema a person writes can stall
 * the server on a crafted value. Throws on a pattern RE2 does not accept.
 * re2js is loaded by the first pattern compiled, not at every server start.
 */
export function compileRegex(pattern: string): { test(value: string): boolean } {
  const re = re2().compile(pattern);
  return { test: (value: string) => re.matcher(value).find() };
}

/**
 * The size of a pattern's RE2 program (instructions, counted repetitions
 * expanded): matching costs up to about this many steps per character of
 * the text, so it prices a pattern before it is accepted. Throws as
 * compileRegex does.
 */
export function regexProgramSize(pattern: string): number {
  return re2().compile(pattern).programSize();
}
