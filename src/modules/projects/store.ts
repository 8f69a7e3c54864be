import type { Env } from "../../lib/envs";
import type { Queryable } from "../../lib/store";
import type { AnalysisSettings, Organisation, Project, User } from "./types";

/**
 * The projects module's queries: organisations, their memberships and
 * users, and projects. Plain functions over a `Queryable` (the store, or the
 * caller's transaction); locks, audit and validation stay in the service.
 */

/** What a project's analysis column holds when a setting was never set (and what a new project starts with). */
export const DEFAULT_ANALYSIS: AnalysisSettings = {
  method: "frequentist",
  significanceThreshold: 0.05,
  autoRollback: false,
  minSampleDays: 7,
};

type ProjectRow = {
  id: string;
  organisation_id: string;
  name: string;
  slug: string;
  domain: string;
  allowed_origins: string;
  owner_email: string;
  plan: string;
  status: string;
  subscription_status: string;
  billing_interval: string;
  current_period_end: string;
  trial_ends_at: string | null;
  cancel_at_period_end: number;
  module_translations: number;
  module_configs: number;
  module_gates: number;
  module_experiments: number;
  module_feedback: number;
  public_ticket_creation: number;
  default_env: Env;
  timezone: string;
  event_retention_days: number;
  stale_after_days: number;
  analysis: string;
  created_at: string;
  updated_at: string;
};

type OrganisationRow = { id: string; name: string; created_at: string };
type UserRow = { id: string; email: string; created_at: string };

/** Columns a PATCH may set, mapped from record field to column. */
export const PATCHABLE_COLUMNS = {
  name: "name",
  domain: "domain",
  allowedOrigins: "allowed_origins",
  slug: "slug",
  defaultEnv: "default_env",
  timezone: "timezone",
  eventRetentionDays: "event_retention_days",
  staleAfterDays: "stale_after_days",
  moduleTranslations: "module_translations",
  moduleConfigs: "module_configs",
  moduleGates: "module_gates",
  moduleExperiments: "module_experiments",
  moduleFeedback: "module_feedback",
  publicTicketCreation: "public_ticket_creation",
} as const;

export type PatchableField = keyof typeof PATCHABLE_COLUMNS;

// Organisations and users.

export async function insertOrganisation(q: Queryable, organisation: Organisation): Promise<void> {
  await q.run("INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)", organisation.id, organisation.name, organisation.createdAt);
}

export async function insertOwnerMembership(q: Queryable, organisationId: string, userId: string, createdAt: string): Promise<void> {
  await q.run("INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)", organisationId, userId, createdAt);
}

/** The organisation's longest-standing owner's email, or null. */
export async function findFirstOwnerEmail(q: Queryable, organisationId: string): Promise<string | null> {
  const row = await q.one<{ email: string }>(
    "SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organisation_id = ? AND m.role = 'owner' ORDER BY m.created_at, u.email LIMIT 1",
    organisationId,
  );
  return row?.email ?? null;
}

export async function findOrganisation(q: Queryable, id: string): Promise<Organisation | null> {
  const row = await q.one<OrganisationRow>("SELECT id, name, created_at FROM organisations WHERE id = ?", id);
  return row ? toOrganisation(row) : null;
}

export async function findOrganisationOfProject(q: Queryable, projectId: string): Promise<Organisation | null> {
  const row = await q.one<OrganisationRow>(
    "SELECT o.id, o.name, o.created_at FROM organisations o JOIN projects p ON p.organisation_id = o.id WHERE p.id = ?",
    projectId,
  );
  return row ? toOrganisation(row) : null;
}

/** The user of an already normalised email, compared case-insensitively. */
export async function findUserByEmail(q: Queryable, normalisedEmail: string): Promise<User | null> {
  const row = await q.one<UserRow>("SELECT id, email, created_at FROM users WHERE lower(email) = lower(?)", normalisedEmail);
  return row ? { id: row.id, email: row.email, createdAt: row.created_at } : null;
}

/** Does nothing when a user of that email already exists (a concurrent insert made it first). */
export async function insertUserIfAbsent(q: Queryable, id: string, email: string, createdAt: string): Promise<void> {
  await q.run("INSERT INTO users (id, email, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", id, email, createdAt);
}

// Projects.

export async function insertProject(
  q: Queryable,
  p: {
    id: string;
    organisationId: string;
    name: string;
    slug: string;
    ownerEmail: string;
    plan: string;
    currentPeriodEnd: string;
    publicTicketCreation: 0 | 1;
    /** JSON of the analysis settings. */
    analysis: string;
    createdAt: string;
    updatedAt: string;
  },
): Promise<void> {
  await q.run(
    `INSERT INTO projects (id, organisation_id, name, slug, owner_email, plan, current_period_end,
         public_ticket_creation, analysis, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    p.id,
    p.organisationId,
    p.name,
    p.slug,
    p.ownerEmail,
    p.plan,
    p.currentPeriodEnd,
    p.publicTicketCreation,
    p.analysis,
    p.createdAt,
    p.updatedAt,
  );
}

export async function findProject(q: Queryable, id: string): Promise<Project | null> {
  const row = await q.one<ProjectRow>("SELECT * FROM projects WHERE id = ?", id);
  return row ? toProject(row) : null;
}

export async function countProjects(q: Queryable): Promise<number> {
  const row = await q.one<{ n: number | string }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM projects");
  return Number(row?.n ?? 0);
}

/** Every project of the organisations the user belongs to, by organisation (name, then id) then project (name, then id). */
export async function listProjectsOfUser(q: Queryable, userId: string): Promise<Project[]> {
  const rows = await q.all<ProjectRow & { organisation_name: string }>(
    `SELECT p.*, o.name AS organisation_name FROM projects p JOIN memberships m ON m.organisation_id = p.organisation_id JOIN organisations o ON o.id = p.organisation_id
       WHERE m.user_id = ?`,
    userId,
  );
  // Sorted here, not by the engine: SQLite compares bytes, PostgreSQL its collation.
  rows.sort(
    (a, b) =>
      compare(a.organisation_name, b.organisation_name) || compare(a.organisation_id, b.organisation_id) || compare(a.name, b.name) || compare(a.id, b.id),
  );
  return rows.map(toProject);
}

/**
 * Sets the given fields (PATCHABLE_COLUMNS order), then `analysis` (JSON)
 * when given, then `updated_at`, of one project.
 */
export async function updateProject(
  q: Queryable,
  id: string,
  changes: { fields: Partial<Record<PatchableField, string | number>>; analysis: string | undefined; updatedAt: string },
): Promise<void> {
  const sets: string[] = [];
  const values: (string | number)[] = [];
  for (const [field, column] of Object.entries(PATCHABLE_COLUMNS) as [PatchableField, string][]) {
    const value = changes.fields[field];
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    values.push(value);
  }
  if (changes.analysis !== undefined) {
    sets.push("analysis = ?");
    values.push(changes.analysis);
  }
  sets.push("updated_at = ?");
  values.push(changes.updatedAt);
  await q.run(`UPDATE projects SET ${sets.join(", ")} WHERE id = ?`, ...values, id);
}

// Row shaping.

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function toOrganisation(r: OrganisationRow): Organisation {
  return { id: r.id, name: r.name, createdAt: r.created_at };
}

function toProject(r: ProjectRow): Project {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    name: r.name,
    slug: r.slug,
    domain: r.domain,
    allowedOrigins: JSON.parse(r.allowed_origins) as string[],
    ownerEmail: r.owner_email,
    plan: r.plan,
    status: r.status,
    subscriptionStatus: r.subscription_status,
    billingInterval: r.billing_interval,
    currentPeriodEnd: r.current_period_end,
    trialEndsAt: r.trial_ends_at,
    cancelAtPeriodEnd: Number(r.cancel_at_period_end) ? 1 : 0,
    moduleTranslations: Number(r.module_translations) === 1,
    moduleConfigs: Number(r.module_configs) === 1,
    moduleGates: Number(r.module_gates) === 1,
    moduleExperiments: Number(r.module_experiments) === 1,
    moduleFeedback: Number(r.module_feedback) === 1,
    publicTicketCreation: Number(r.public_ticket_creation) === 1,
    defaultEnv: r.default_env,
    timezone: r.timezone,
    eventRetentionDays: Number(r.event_retention_days),
    staleAfterDays: Number(r.stale_after_days ?? 30),
    analysis: { ...DEFAULT_ANALYSIS, ...(JSON.parse(r.analysis) as Partial<AnalysisSettings>) },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Every project's raw-event retention (the analytics retention job). */
export async function projectRetentions(q: Queryable): Promise<{ id: string; eventRetentionDays: number }[]> {
  const rows = await q.all<{ id: string; days: number | string }>("SELECT id, event_retention_days AS days FROM projects ORDER BY id");
  return rows.map((r) => ({ id: r.id, eventRetentionDays: Number(r.days) }));
}

/**
 * Whether some project admits a browser origin: its domain is that origin (or, for https, its bare host), its
 * allowed origins list it, or it names none at all (its keys take any origin). Origins are validated to letters,
 * digits, dots, hyphens, colons and slashes, so the LIKE pattern holds no wildcard of the caller's.
 */
export async function someProjectAdmits(q: Queryable, domains: string[], origin: string): Promise<boolean> {
  const [a, b] = [domains[0] ?? "", domains[1] ?? domains[0] ?? ""];
  const row = await q.one<{ found: number }>(
    "SELECT 1 AS found FROM projects WHERE domain IN (?, ?) OR allowed_origins LIKE ? OR (domain = '' AND allowed_origins = '[]') LIMIT 1",
    a,
    b,
    `%${JSON.stringify(origin)}%`,
  );
  return row !== undefined;
}
