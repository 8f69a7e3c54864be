import { ENVS, type Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";

// Flags as code (issue 31): the document `svc export` writes and `svc plan` / `svc apply` read. Names are
// the references; ids, salts and secrets never appear. Every section is sorted by name and every entry's
// keys come in a fixed order, so two exports of the same definitions are the same text.

export const DOCUMENT_VERSION = 1;

/** The sections, in the order they are applied (a section only names resources of earlier ones or its own). */
export const SECTIONS = ["attributes", "events", "segments", "templates", "killswitches", "gates", "configs", "universes", "metrics", "alerts", "experiments"] as const;
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

export type Actor = { email: string; type: string };

/**
 * One section of the document: how the project's resources read as entries, how an entry from a file is
 * checked and normalised the same way (so the two compare field by field), and how apply makes the
 * stored resource into the entry through the owning module's service (its checks, versions and audit).
 */
export type Kind = {
  section: Section;
  export(ctx: ServiceContext, projectId: string, envs: readonly Env[]): Promise<Entry[]>;
  normalize(raw: Record<string, unknown>, at: string, envs: readonly Env[]): Entry;
  /** Makes the stored resource (`current`, undefined: none yet) into `next`. */
  apply(ctx: ServiceContext, projectId: string, current: Entry | undefined, next: Entry, actor: Actor): Promise<void>;
  /** Deletes it (`--prune`); absent: this kind is never deleted by apply. */
  remove?(ctx: ServiceContext, projectId: string, name: string, actor: Actor): Promise<void>;
};

/** The YAML `svc export` writes (and `GET /api/admin/export?format=yaml` answers): one header line, then the document. */
export function exportYaml(doc: object): string {
  return `# svc definitions: svc plan FILE shows what svc apply FILE would change.\n${Bun.YAML.stringify(doc, null, 2)}`;
}
