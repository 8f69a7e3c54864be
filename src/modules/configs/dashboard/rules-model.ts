import type { ConfigRule } from "../../../sdk/configs";
import { type DraftCondition, fromDraft, toDraftCondition } from "../../gates/dashboard/client";

/**
 * The rules editor's state and its conversions (issue 29): values are held as the text typed, so a
 * half-typed JSON value stays on screen; only `toRules` turns them back into rules for the API.
 */

let nextKey = 0;
const newKey = () => ++nextKey;

/** `saved`: the text as loaded from the stored rules (already checked against the schema then); absent for a new one. */
export type SplitRow = { key: number; text: string; weight: string; saved?: string };
export type EditRule = { key: number; name: string; conditions: DraftCondition[]; mode: "value" | "split"; text: string; saved?: string; split: SplitRow[]; unit: string };

const compact = (v: unknown) => JSON.stringify(v) ?? "null";
const pretty = (v: unknown) => JSON.stringify(v, null, 2) ?? "null";

export function toEdit(rules: readonly ConfigRule[]): EditRule[] {
  return rules.map((r) => {
    const text = r.split ? "" : pretty(r.value ?? null);
    return {
      key: newKey(),
      name: r.name ?? "",
      conditions: r.conditions.map(toDraftCondition),
      mode: r.split ? "split" : "value",
      text,
      saved: r.split ? undefined : text,
      split: (r.split ?? []).map((e) => ({ key: newKey(), text: compact(e.value), weight: String(e.weight), saved: compact(e.value) })),
      unit: r.unit ?? "",
    };
  });
}

export function emptyEditRule(): EditRule {
  return { key: newKey(), name: "", conditions: [], mode: "value", text: "null", split: [], unit: "" };
}

export function newSplitRow(text = "", weight = "0"): SplitRow {
  return { key: newKey(), text, weight };
}

/** A rule switched between one value and a split keeps what it served: the value becomes the split's first value and back. */
export function switchMode(rule: EditRule, mode: EditRule["mode"]): EditRule {
  if (mode === rule.mode) return rule;
  if (mode === "split") {
    let first = rule.text;
    try {
      first = compact(JSON.parse(rule.text));
    } catch {
      // Kept as typed: the row says it is not JSON.
    }
    return { ...rule, mode, split: rule.split.length ? rule.split : [newSplitRow(first, "50"), newSplitRow("", "50")] };
  }
  const first = rule.split[0]?.text ?? "null";
  let text = first;
  try {
    text = pretty(JSON.parse(first));
  } catch {
    // Kept as typed.
  }
  return { ...rule, mode, text };
}

/** The integer weights of a split, or NaN for one that is not a whole number. */
export const weightOf = (row: SplitRow) => (/^\s*\d+\s*$/.test(row.weight) ? Number(row.weight) : Number.NaN);
export const weightSum = (rule: EditRule) => rule.split.reduce((n, r) => n + (Number.isNaN(weightOf(r)) ? 0 : weightOf(r)), 0);

const parse = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

/**
 * The rules to send, or the reasons they cannot be sent yet (JSON that does not parse, weights that are
 * not whole numbers summing to 100). Everything else (operators' values, the schema) is the server's to check.
 */
export function toRules(edit: readonly EditRule[]): { rules: ConfigRule[]; problems: string[] } {
  const problems: string[] = [];
  const rules = edit.map((r, i): ConfigRule => {
    const n = i + 1;
    const conditions = fromDraft([{ key: 0, name: "", percentage: "100", unit: "", conditions: r.conditions }])[0]!.conditions;
    const rule: ConfigRule = { conditions };
    if (r.name.trim()) rule.name = r.name.trim();
    if (r.mode === "value") {
      const v = parse(r.text);
      if (!v.ok) problems.push(`The value of rule ${n} is not valid JSON.`);
      rule.value = v.ok ? v.value : null;
      return rule;
    }
    rule.split = r.split.map((row, j) => {
      const v = parse(row.text);
      if (!v.ok) problems.push(`Value ${j + 1} of the split of rule ${n} is not valid JSON.`);
      const w = weightOf(row);
      if (Number.isNaN(w) || w > 100) problems.push(`The weight of value ${j + 1} of rule ${n} is not a whole number from 0 to 100.`);
      return { value: v.ok ? v.value : null, weight: Number.isNaN(w) ? 0 : w };
    });
    const sum = weightSum(r);
    if (r.split.length === 0) problems.push(`The split of rule ${n} has no values.`);
    else if (sum !== 100) problems.push(`The weights of rule ${n} sum to ${sum}%; they must sum to 100%.`);
    if (r.unit.trim()) rule.unit = r.unit.trim();
    return rule;
  });
  return { rules, problems };
}

/** Rules in one field order, for telling whether the editor differs from what is stored. */
export function canonical(rules: readonly ConfigRule[]): string {
  return JSON.stringify(
    rules.map((r) => [
      r.name ?? null,
      r.conditions.map((c) => [c.attr, c.op, c.value ?? null]),
      r.split ? null : (r.value ?? null),
      r.split ? r.split.map((e) => [e.value, e.weight]) : null,
      r.unit ?? null,
    ]),
  );
}

/** `"a" 50% · "b" 30% · "c" 20%`: the split in words, what the weights bar shows. */
export function sharesText(rule: EditRule): string {
  return rule.split.map((row) => `${row.text.trim() || "(empty)"} ${Number.isNaN(weightOf(row)) ? "?" : weightOf(row)}%`).join(" · ");
}
