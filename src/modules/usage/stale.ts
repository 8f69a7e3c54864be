/**
 * Whether a flag's published state on an env serves one value to everyone (issue 30, stale flags): pure
 * over the published state, so the rule is read in one place.
 */
import type { GateRule } from "../../sdk/gates";

/** A killswitch whose sub-switches all say what its flat value says (or that has none). */
export function killswitchIsUniform(state: { value: boolean; switches: Record<string, boolean> }): boolean {
  return Object.values(state.switches).every((v) => v === state.value);
}

/**
 * A gate whose rules give everyone the same answer: none (everyone false), or a first rule without
 * conditions at 0 or 100 % (it decides for everyone before any other rule is read).
 */
export function gateIsUniform(rules: readonly GateRule[]): boolean {
  if (rules.length === 0) return true;
  const first = rules[0]!;
  return first.conditions.length === 0 && (first.passPercentage === 0 || first.passPercentage === 100);
}

/** A config without rules serves its value to everyone. */
export function configIsUniform(rules: readonly unknown[] | undefined): boolean {
  return !rules || rules.length === 0;
}
