import { type Db, immediate, writeTransaction } from "../../lib/db";
import { notFound, validation } from "../../lib/errors";
import { newId, newUuid, nowIso } from "../../lib/ids";
import type { KeysService } from "../keys/service";

export const ENVS = ["dev", "staging", "prod"] as const;
export type Env = (typeof ENVS)[number];

export type AnalysisSettings = {
  method: "frequentist" | "bayesian";
  significanceThreshold: number;
  autoRollback: boolean;
  minSampleDays: number;
};

export const DEFAULT_ANALYSIS: AnalysisSettings = {
  method: "frequentist",
  significanceThreshold: 0.05,
  autoRollback: false,
  minSampleDays: 7,
};

/** The full project record of the spec, plus the settings DECISIONS.md names. */
export type Project = {
  id: string;
  organisationId: string;
  name: string;
  slug: string;
  domain: string;
  ownerEmail: string;
  plan: string;
  status: string;
  subscriptionStatus: string;
  billingInterval: string;
  currentPeriodEnd: string;
  trialEndsAt: string | null;
  cancelAtPeriodEnd: 0 | 1;
  moduleTranslations: boolean;
  moduleConfigs: boolean;
  moduleGates: boolean;
  moduleExperiments: boolean;
  moduleFeedback: boolean;
  publicTicketCreation: boolean;
  defaultEnv: Env;
  timezone: string;
  analysis: AnalysisSettings;
  createdAt: string;
  updatedAt: string;
};

export type ProjectPatch = Partial<
  Pick<
    Project,
    | "name"
    | "domain"
    | "slug"
    | "defaultEnv"
    | "timezone"
    | "moduleTranslations"
    | "moduleConfigs"
    | "moduleGates"
    | "moduleExperiments"
    | "moduleFeedback"
    | "publicTicketCreation"
  >
> & { analysis?: Partial<AnalysisSettings> };

type ProjectRow = {
  id: string;
  organisation_id: string;
  name: string;
  slug: string;
  domain: string;
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
  analysis: string;
  created_at: string;
  updated_at: string;
};

export type Organisation = { id: string; name: string; createdAt: string };
export type User = { id: string; email: string; createdAt: string };

/** Columns a PATCH may set, mapped from record field to column. */
const PATCHABLE_COLUMNS = {
  name: "name",
  domain: "domain",
  slug: "slug",
  defaultEnv: "default_env",
  timezone: "timezone",
  moduleTranslations: "module_translations",
  moduleConfigs: "module_configs",
  moduleGates: "module_gates",
  moduleExperiments: "module_experiments",
  moduleFeedback: "module_feedback",
  publicTicketCreation: "public_ticket_creation",
} as const;

export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);
  return slug || "project";
}

/**
 * Normalises a project domain ("example.com", "https://app.example.com:8443")
 * and derives the browser origin SDK keys accept. Empty clears it.
 */
export function parseDomain(input: string): { domain: string; origin: string | null } {
  const trimmed = input.trim().toLowerCase();
  if (trimmed === "") return { domain: "", origin: null };
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//.test(trimmed);
  let url: URL;
  try {
    url = new URL(hasScheme ? trimmed : `https://${trimmed}`);
  } catch {
    throw validation("domain is not a valid host name", "domain: expected a host like example.com or an origin like https://app.example.com");
  }
  if (!["http:", "https:"].includes(url.protocol) || url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    throw validation("domain is not a valid host name", "domain: expected a host like example.com or an origin like https://app.example.com, without path or query");
  }
  if (!/^[a-z0-9.-]+$/.test(url.hostname) && !/^\[[0-9a-f:]+\]$/.test(url.hostname)) {
    throw validation("domain is not a valid host name", "domain: only letters, digits, dots and hyphens");
  }
  return { domain: hasScheme ? url.origin : url.host, origin: url.origin };
}

function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export class ProjectsService {
  constructor(
    private readonly db: Db,
    private readonly keys: KeysService,
  ) {}

  /**
   * Creates an organisation, its owner and a first project in one
   * transaction (used by `svc init` and headless first start).
   */
  createOrganisationWithProject(input: {
    projectName: string;
    ownerEmail: string;
    plan?: string;
    publicTicketCreation?: boolean;
    organisationName?: string;
  }): { organisation: Organisation; project: Project; user: User } {
    return immediate(this.db, () => {
      const now = nowIso();
      const organisation: Organisation = {
        id: newId("org"),
        name: input.organisationName ?? `${input.projectName} organisation`,
        createdAt: now,
      };
      this.db.query("INSERT INTO organisations (id, name, created_at) VALUES (?, ?, ?)").run(organisation.id, organisation.name, now);
      const user = this.findOrCreateUser(input.ownerEmail);
      this.db
        .query("INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)")
        .run(organisation.id, user.id, now);
      const project = this.insertProject(organisation.id, {
        name: input.projectName,
        ownerEmail: user.email,
        plan: input.plan ?? "pro",
        publicTicketCreation: input.publicTicketCreation ?? false,
      });
      return { organisation, project, user };
    });
  }

  /**
   * Adds a project to an existing organisation (`svc init --organisation`,
   * `POST /api/admin/projects`). Runs inside the caller's transaction when
   * there is one.
   */
  createProject(
    organisationId: string,
    input: { name: string; ownerEmail: string; plan?: string; publicTicketCreation?: boolean },
  ): Project {
    const name = input.name.trim();
    if (name === "" || name.length > 200) throw validation("name must be 1 to 200 characters", "name: 1 to 200 characters, not only spaces");
    return immediate(this.db, () => {
      if (!this.organisation(organisationId)) throw notFound(`No organisation ${organisationId}`, "organisationId: see GET /api/admin/me for yours");
      return this.insertProject(organisationId, {
        name,
        ownerEmail: input.ownerEmail.trim().toLowerCase(),
        plan: input.plan ?? "pro",
        publicTicketCreation: input.publicTicketCreation ?? false,
      });
    });
  }

  /**
   * One admin, one server and one client key for a new project, as `svc init`
   * and the first-run setup hand them out (shown once). Call inside the
   * transaction that created the project, so it never exists without them.
   */
  mintStarterKeys(projectId: string): { admin: string; server: string; client: string } {
    const allowedOrigin = this.allowedOrigin(projectId);
    const mint = (type: "admin" | "server" | "client") => this.keys.mint(projectId, { type, name: `first ${type} key`, allowedOrigin }).key;
    return { admin: mint("admin"), server: mint("server"), client: mint("client") };
  }

  /** The organisation's longest-standing owner (the default owner of a project added to it), or null. */
  firstOwnerEmail(organisationId: string): string | null {
    return (
      this.db
        .query<{ email: string }, [string]>(
          "SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organisation_id = ? AND m.role = 'owner' ORDER BY m.created_at, u.email LIMIT 1",
        )
        .get(organisationId)?.email ?? null
    );
  }

  organisation(id: string): Organisation | null {
    const row = this.db.query<{ id: string; name: string; created_at: string }, [string]>("SELECT id, name, created_at FROM organisations WHERE id = ?").get(id);
    return row ? { id: row.id, name: row.name, createdAt: row.created_at } : null;
  }

  /** Every project of the organisations the person belongs to, by organisation then name. */
  listForUser(userId: string): Project[] {
    return this.db
      .query<ProjectRow, [string]>(
        `SELECT p.* FROM projects p JOIN memberships m ON m.organisation_id = p.organisation_id JOIN organisations o ON o.id = p.organisation_id
         WHERE m.user_id = ? ORDER BY o.name, o.id, p.name, p.id`,
      )
      .all(userId)
      .map(toProject);
  }

  findOrCreateUser(email: string): User {
    const normalised = email.trim().toLowerCase();
    const existing = this.db
      .query<{ id: string; email: string; created_at: string }, [string]>("SELECT id, email, created_at FROM users WHERE email = ?")
      .get(normalised);
    if (existing) return { id: existing.id, email: existing.email, createdAt: existing.created_at };
    const user: User = { id: newId("usr"), email: normalised, createdAt: nowIso() };
    this.db.query("INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)").run(user.id, user.email, user.createdAt);
    return user;
  }

  countProjects(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM projects").get() as { n: number }).n;
  }

  find(id: string): Project | null {
    const row = this.db.query<ProjectRow, [string]>("SELECT * FROM projects WHERE id = ?").get(id);
    return row ? toProject(row) : null;
  }

  get(id: string): Project {
    const project = this.find(id);
    if (!project) throw notFound(`Project ${id} not found`);
    return project;
  }

  organisationOf(projectId: string): Organisation | null {
    const row = this.db
      .query<{ id: string; name: string; created_at: string }, [string]>(
        "SELECT o.id, o.name, o.created_at FROM organisations o JOIN projects p ON p.organisation_id = o.id WHERE p.id = ?",
      )
      .get(projectId);
    return row ? { id: row.id, name: row.name, createdAt: row.created_at } : null;
  }

  /** Origin SDK keys of this project accept from browsers, or null for any. */
  allowedOrigin(projectId: string): string | null {
    const project = this.find(projectId);
    return project ? parseDomain(project.domain).origin : null;
  }

  /**
   * Applies only the fields sent. A new domain is stamped into every live SDK
   * key in the same transaction, so no key is ever left with the old origin.
   */
  async update(id: string, patch: ProjectPatch): Promise<Project> {
    const sets: string[] = [];
    const values: (string | number)[] = [];
    let newOrigin: string | null | undefined;

    if (patch.name !== undefined) {
      if (patch.name.trim() === "") throw validation("name must not be empty", "name: at least one non-space character");
      patch.name = patch.name.trim();
    }
    if (patch.slug !== undefined && !/^[a-z0-9](?:[a-z0-9-]{0,62})$/.test(patch.slug)) {
      throw validation("slug must be lowercase letters, digits and hyphens", "slug: 1-63 chars of a-z, 0-9 and -, starting with a letter or digit");
    }
    if (patch.timezone !== undefined && !isValidTimezone(patch.timezone)) {
      throw validation(`Unknown time zone ${patch.timezone}`, "timezone: an IANA name such as UTC or Europe/Berlin");
    }
    if (patch.domain !== undefined) {
      const parsed = parseDomain(patch.domain);
      patch.domain = parsed.domain;
      newOrigin = parsed.origin;
    }
    for (const [field, column] of Object.entries(PATCHABLE_COLUMNS) as [keyof typeof PATCHABLE_COLUMNS, string][]) {
      const value = patch[field];
      if (value === undefined) continue;
      sets.push(`${column} = ?`);
      values.push(typeof value === "boolean" ? (value ? 1 : 0) : value);
    }

    return writeTransaction(this.db, () => {
      const current = this.get(id);
      if (patch.analysis !== undefined) {
        sets.push("analysis = ?");
        values.push(JSON.stringify({ ...current.analysis, ...patch.analysis }));
      }
      if (sets.length > 0) {
        sets.push("updated_at = ?");
        values.push(nowIso());
        this.db.query(`UPDATE projects SET ${sets.join(", ")} WHERE id = ?`).run(...values, id);
      }
      if (newOrigin !== undefined) this.keys.stampAllowedOrigin(id, newOrigin);
      return this.get(id);
    });
  }

  private insertProject(
    organisationId: string,
    input: { name: string; ownerEmail: string; plan: string; publicTicketCreation: boolean },
  ): Project {
    const now = new Date();
    const periodEnd = new Date(now.getTime() + 30 * 24 * 3600 * 1000);
    const id = newUuid();
    this.db
      .query(
        `INSERT INTO projects (id, organisation_id, name, slug, owner_email, plan, current_period_end,
           public_ticket_creation, analysis, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        organisationId,
        input.name,
        slugify(input.name),
        input.ownerEmail,
        input.plan,
        periodEnd.toISOString(),
        input.publicTicketCreation ? 1 : 0,
        JSON.stringify(DEFAULT_ANALYSIS),
        now.toISOString(),
        now.toISOString(),
      );
    return this.get(id);
  }
}

function toProject(r: ProjectRow): Project {
  return {
    id: r.id,
    organisationId: r.organisation_id,
    name: r.name,
    slug: r.slug,
    domain: r.domain,
    ownerEmail: r.owner_email,
    plan: r.plan,
    status: r.status,
    subscriptionStatus: r.subscription_status,
    billingInterval: r.billing_interval,
    currentPeriodEnd: r.current_period_end,
    trialEndsAt: r.trial_ends_at,
    cancelAtPeriodEnd: r.cancel_at_period_end ? 1 : 0,
    moduleTranslations: r.module_translations === 1,
    moduleConfigs: r.module_configs === 1,
    moduleGates: r.module_gates === 1,
    moduleExperiments: r.module_experiments === 1,
    moduleFeedback: r.module_feedback === 1,
    publicTicketCreation: r.public_ticket_creation === 1,
    defaultEnv: r.default_env,
    timezone: r.timezone,
    analysis: { ...DEFAULT_ANALYSIS, ...(JSON.parse(r.analysis) as Partial<AnalysisSettings>) },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
