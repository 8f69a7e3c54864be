import type { Env } from "../../lib/envs";
import type { GateRule } from "../../sdk/gates";

// The gates module's limits, shapes and action names: what its routes, store, CLI and dashboard share.

export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;
export const RULES_MAX = 100;
export const CONDITIONS_MAX = 50;
export const LIST_VALUES_MAX = 1000;
export const TEXT_VALUE_MAX = 1000;
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
