import type { Env } from "../../lib/envs";
import type { GateRule } from "../../sdk/gates";

// The gates module's limits, shapes and action names: what its routes, store, CLI and dashboard share.

export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;
export const RULES_MAX = 100;
export const CONDITIONS_MAX = 50;
export const LIST_VALUES_MAX = 1000;
export const TEXT_VALUE_MAX = 1000;
/**
 * The most one evaluation of a gate may cost, in units of about one condition on a 4,096-character
 * attribute (~1 µs; see cost.ts for what each condition costs): about 20 ms of work at worst, where
 * the limits above alone allowed seconds. Publishing rules over it is refused (VALIDATION).
 */
export const EVALUATION_COST_MAX = 20_000;
/** An `in` / `not_in` list costs 1 unit more per this many entries. */
export const LIST_ENTRIES_PER_UNIT = 8;
/** A regex costs this many units per instruction of its RE2 program (about 16 ns per instruction and character × 4,096 characters). */
export const REGEX_UNITS_PER_INSTRUCTION = 64;
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

export type Actor = { email: string; type: string };

export type GateEnvState = { rules: GateRule[]; version: number; updatedAt: string; updatedBy: string };

export type Gate = {
  id: string;
  name: string;
  description: string;
  /** Bucketing salt, fixed at creation: a unit keeps its bucket for the gate's life. */
  salt: string;
  createdAt: string;
  updatedAt: string;
  envs: Record<Env, GateEnvState>;
};

export type CreateGateInput = {
  name: string;
  description?: string;
  rules?: GateRule[];
  /** A template's id or name: the gate starts with one rule of its conditions. */
  template?: string;
  /** That rule's pass percentage (default 100). */
  passPercentage?: number;
};

export type HistoryEntry = { env: Env; version: number; rules: GateRule[]; action: string; actorEmail: string; actorType: string; createdAt: string };

/** What SDKs get for one gate on one env. */
export type PublishedGate = { salt: string; rules: GateRule[]; version: number };

export const ACTIONS = {
  create: "gate.create",
  rules: "gate.rules.set",
  rollback: "gate.rollback",
  update: "gate.update",
  delete: "gate.delete",
} as const;
