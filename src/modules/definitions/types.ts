import { ENVS, type Env } from "../../lib/envs";

// Flags as code (issue 31): the document `svc export` writes and `svc plan` / `svc apply` read. Names are
// the references; ids, salts and secrets never appear. Every section is sorted by name and every entry's
// keys come in a fixed order, so two exports of the same definitions are the same text.

export const DOCUMENT_VERSION = 1;

/** The sections, in the order they are applied (a section only names resources of earlier ones or its own). */
export const SECTIONS = ["attributes", "segments", "templates", "killswitches", "gates", "configs", "universes"] as const;
export type Section = (typeof SECTIONS)[number];

/** At most this many entries in one document: an apply runs in one transaction. */
export const ENTRIES_MAX = 2000;

export type Entry = { name: string } & Record<string, unknown>;

export type DefinitionsDocument = { version: number } & Partial<Record<Section, Entry[]>>;

export type FieldChange = { field: string; before: unknown; after: unknown };

/** One line of a plan: what apply does to one resource. */
export type PlannedChange = { section: Section; name: string; action: "create" | "update" | "delete"; changes: FieldChange[] };

export type Plan = { changes: PlannedChange[]; summary: { create: number; update: number; delete: number } };

export function isEnv(value: string): value is Env {
  return (ENVS as readonly string[]).includes(value);
}
