// Small helpers of the client: own-property lookups, timers that do not keep a process alive, RE2, a bounded seen-set.

import { RE2JS } from "re2js";
import type { CompiledRegex } from "./gates";

export function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}

export function hasOwn(map: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(map, key);
}

/**
 * RE2 (re2js), the engine the server checks and evaluates patterns with: matching is linear in the text
 * whatever the pattern, so a rule such as `^(a|aa)+$`, harmless to RE2 but exponential for a backtracking
 * RegExp, cannot freeze an app on a crafted context value (see ClientOptions.compileRegex).
 */
export function re2Regex(pattern: string): CompiledRegex {
  const re = RE2JS.compile(pattern);
  return { test: (value: string) => re.matcher(value).find() };
}

/** A snapshot map's own entry: a name such as `constructor` must not find Object.prototype's members. */
export function ownEntry<V>(map: Record<string, V>, name: string): V | undefined {
  return hasOwn(map, name) ? map[name] : undefined;
}

/**
 * Which keys were seen lately, bounded: two generations of at most half the
 * bound each (a key seen again moves to the young one; when the young one is
 * full it becomes the old one and the old one is dropped). O(1) per call, no
 * walk over deleted entries.
 */
export function createSeenSet(capacity: number) {
  const half = Math.max(1, Math.floor(capacity / 2));
  let young = new Set<string>();
  let old = new Set<string>();
  return {
    /** Remembers the key; true when it was not remembered before. */
    add(key: string): boolean {
      if (young.has(key)) return false;
      const known = old.has(key);
      young.add(key);
      if (young.size >= half) {
        old = young;
        young = new Set();
      }
      return !known;
    },
  };
}

export function kindOf(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}
