import type { Env } from "../../lib/envs";
import type { ConfigRule } from "../../sdk/configs";

// The configs module's limits, shapes and action names: what its routes, store, CLI and dashboard share.

export const NAME_MAX = 128;
export const DESCRIPTION_MAX = 1000;
/** Largest config value accepted, as JSON text. */
export const VALUE_MAX_BYTES = 256 * 1024;
export const ACTIVITY_DEFAULT_LIMIT = 20;
export const ACTIVITY_MAX_LIMIT = 100;
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

/** Who made a change, as recorded on activity rows and published versions. */
export type Actor = { email: string; type: string };

/** An env's published state: the default value and the rules before it (issue 29; empty: everyone gets the value). */
export type EnvValue = { value: unknown; rules: ConfigRule[]; version: number; updatedAt: string };
/** `rules` absent: publishing keeps the env's published rules. */
export type DraftValue = { value: unknown; rules?: ConfigRule[]; baseVersion: number; updatedAt: string };
export type Draft = DraftValue & { id: string; env: Env };

export type Config = {
  id: string;
  name: string;
  description: string;
  schema: unknown;
  envs: Record<Env, EnvValue>;
  drafts: Partial<Record<Env, DraftValue>>;
  createdAt: string;
  updatedAt: string;
};

export type CreateInput = { name: string; schema: unknown; value?: unknown; description?: string };

/** PATCH fields; a key that is `undefined` was not sent (JSON has no undefined, so `null` is a value). */
export type PatchInput = {
  value?: unknown;
  dev?: unknown;
  staging?: unknown;
  prod?: unknown;
  schema?: unknown;
  description?: string;
};

export type PatchResult = { id: string; versions: Partial<Record<Env, number>>; schemaChanged: boolean };

export type ActivityRow = {
  id: string;
  action: string;
  actorEmail: string;
  actorType: string;
  payload: Record<string, unknown>;
  createdAt: string;
};

export type HistoryEntry = { env: Env; version: number; value: unknown; rules: ConfigRule[]; actorEmail: string; actorType: string; createdAt: string };

export const ACTIONS = {
  create: "config.create",
  update: "config.update",
  draftSave: "config.draft.save",
  publish: "config.publish",
  delete: "config.delete",
} as const;

/** Audit actions that have no activity row (the activity log keeps its five actions). */
export const AUDIT_ONLY_ACTIONS = { draftDelete: "config.draft.delete", rollback: "config.rollback" } as const;

