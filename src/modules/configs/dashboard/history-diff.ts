// Pure (no browser globals): the history's "Changes" column, and its unit test.

export type Version = { version: number; value: unknown; rules: { name?: string; split?: unknown[] }[] };

const short = (v: unknown) => {
  const text = JSON.stringify(v) ?? "null";
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
};

/** What a version changed from the one before it: the default value, and the rules added, removed or changed (issue 29). */
export function versionDiff(before: Version | undefined, after: Version): string {
  if (!before) return "first version";
  const parts: string[] = [];
  if (JSON.stringify(before.value) !== JSON.stringify(after.value)) parts.push(`value ${short(before.value)} → ${short(after.value)}`);
  const label = (r: { name?: string }, i: number) => r.name ?? `rule-${i + 1}`;
  const was = new Map(before.rules.map((r, i) => [label(r, i), JSON.stringify(r)]));
  const now = new Map(after.rules.map((r, i) => [label(r, i), JSON.stringify(r)]));
  const added = [...now.keys()].filter((k) => !was.has(k));
  const removed = [...was.keys()].filter((k) => !now.has(k));
  const changed = [...now.keys()].filter((k) => was.has(k) && was.get(k) !== now.get(k));
  if (added.length > 0) parts.push(`rules added: ${added.join(", ")}`);
  if (removed.length > 0) parts.push(`rules removed: ${removed.join(", ")}`);
  if (changed.length > 0) parts.push(`rules changed: ${changed.join(", ")}`);
  if (parts.length === 0 && JSON.stringify([...was.keys()]) !== JSON.stringify([...now.keys()])) parts.push("rules reordered");
  return parts.length > 0 ? parts.join("; ") : "same as before (republished)";
}

