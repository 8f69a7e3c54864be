import { bumpEveryEnv } from "../../lib/revisions";
import { type AuditActor, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import type { Env } from "../../lib/envs";
import { notFound, validation } from "../../lib/errors";
import { checkNameChars } from "../../lib/validate";
import { ExpiringCache } from "../../lib/expiring-cache";
import { newId, newUuid, nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Tx } from "../../lib/store";
import { KEYS_CHANNEL } from "../keys/service";
import {
  DEFAULT_ANALYSIS,
  PATCHABLE_COLUMNS,
  type PatchableField,
  countProjects,
  findFirstOwnerEmail,
  findOrganisation,
  findOrganisationOfProject,
  findProject,
  findUserByEmail,
  insertOrganisation,
  insertOwnerMembership,
  insertProject,
  insertUserIfAbsent,
  listProjectsOfUser,
  projectRetentions,
  someProjectAdmits,
  updateProject,
} from "./store";
import { admittedOrigins, parseAllowedOrigins, parseDomain } from "./origins";
import { type AnalysisSettings, type Project, type Organisation, type User } from "./types";
export { type AnalysisSettings, type Project, type Organisation, type User };

export { DEFAULT_ANALYSIS };
export { admittedOrigins, parseAllowedOrigins, parseDomain };

export type ProjectPatch = Partial<
  Pick<
    Project,
    | "name"
    | "domain"
    | "allowedOrigins"
    | "slug"
    | "defaultEnv"
    | "timezone"
    | "eventRetentionDays"
    | "staleAfterDays"
    | "moduleTranslations"
    | "moduleConfigs"
    | "moduleGates"
    | "moduleExperiments"
    | "moduleFeedback"
    | "publicTicketCreation"
  >
> & { analysis?: Partial<AnalysisSettings> };

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
 * How long a browser origin's CORS answer is kept per server. Every change of a project's domain or allowed origins
 * is announced on the keys channel and clears it at once (on every server); this only bounds a missed announcement.
 */
const CORS_ORIGIN_CACHE = { ttlMs: 5_000, max: 1_000 };

function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Organisations and projects are created under this one lock, so that a
 * "create the first one if there is none" path that takes it before looking
 * is serialised with every creation, on every server.
 */
export const ORGANISATIONS_LOCK = "organisations";

export class ProjectsService {
  /** Browser origin → whether some project admits it (CORS preflights carry no key). */
  private readonly corsOrigins: ExpiringCache<string, boolean>;

  constructor(private readonly ctx: ServiceContext) {
    this.corsOrigins = new ExpiringCache((origin) => this.lookupCorsOrigin(origin), CORS_ORIGIN_CACHE);
    // A project's origins changed (the keys module announces `project:<id>` when it re-stamps them): forget the answers.
    ctx.store.listen(KEYS_CHANNEL, (payload) => {
      if (payload.startsWith("minted:") || payload.startsWith("revoked:")) return;
      this.corsOrigins.clear();
    });
  }

  /**
   * Whether a browser origin may call the SDK paths at all (CORS): some project's keys admit it. Which key
   * admits it is decided per request by the key's own origins (the auth macro); this lets the preflight,
   * which carries no key, be refused early for an origin no project knows.
   */
  isCorsOrigin(origin: string): Promise<boolean> {
    // When the store cannot answer, the browser is answered as before this check existed: the key's own origins
    // (from memory, or refused with the store's 503) still decide, so approving the origin here gives nothing away.
    return this.corsOrigins.get(origin).catch(() => true);
  }

  private async lookupCorsOrigin(origin: string): Promise<boolean> {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== origin) return false;
    // A domain stored as a bare host means https on the default port (parseDomain).
    return someProjectAdmits(this.ctx.store, url.protocol === "https:" ? [url.origin, url.host] : [url.origin], origin);
  }

  /**
   * Creates an organisation, its owner and a first project in one
   * transaction (used by `svc init`, the setup page and headless first
   * start). Joins the caller's transaction when there is one.
   */
  async createOrganisationWithProject(input: {
    projectName: string;
    ownerEmail: string;
    plan?: string;
    publicTicketCreation?: boolean;
    organisationName?: string;
    /** Who creates it, for the audit row (default: svc itself). */
    actor?: AuditActor;
  }): Promise<{ organisation: Organisation; project: Project; user: User }> {
    return this.ctx.store.write(async (tx) => {
      await tx.lock(ORGANISATIONS_LOCK);
      const now = nowIso();
      const organisation: Organisation = {
        id: newId("org"),
        name: input.organisationName ?? `${input.projectName} organisation`,
        createdAt: now,
      };
      await insertOrganisation(tx, organisation);
      const user = await this.findOrCreateUser(input.ownerEmail);
      await insertOwnerMembership(tx, organisation.id, user.id, now);
      const project = await this.newProject(tx, organisation.id, {
        name: input.projectName,
        ownerEmail: user.email,
        plan: input.plan ?? "pro",
        publicTicketCreation: input.publicTicketCreation ?? false,
      });
      await recordAudit(tx, {
        projectId: project.id,
        organisationId: organisation.id,
        action: "project.create",
        subjectId: project.id,
        subjectName: project.name,
        actor: input.actor ?? SYSTEM_ACTOR,
        detail: { organisationName: organisation.name, newOrganisation: true, ownerEmail: user.email, plan: project.plan },
      });
      return { organisation, project, user };
    });
  }

  /**
   * Adds a project to an existing organisation (`svc init --organisation`,
   * `POST /api/admin/projects`). Joins the caller's transaction when there
   * is one.
   */
  async createProject(
    organisationId: string,
    input: { name: string; ownerEmail: string; plan?: string; publicTicketCreation?: boolean; actor?: AuditActor },
  ): Promise<Project> {
    const name = input.name.trim();
    if (name === "" || name.length > 200) throw validation("name must be 1 to 200 characters", "name: 1 to 200 characters, not only spaces");
    checkNameChars("name", name);
    return this.ctx.store.write(async (tx) => {
      await tx.lock(ORGANISATIONS_LOCK);
      const organisation = await this.organisation(organisationId);
      if (!organisation) throw notFound(`No organisation ${organisationId}`, "organisationId: see GET /api/admin/me for yours");
      const project = await this.newProject(tx, organisationId, {
        name,
        ownerEmail: input.ownerEmail.trim().toLowerCase(),
        plan: input.plan ?? "pro",
        publicTicketCreation: input.publicTicketCreation ?? false,
      });
      await recordAudit(tx, {
        projectId: project.id,
        organisationId,
        action: "project.create",
        subjectId: project.id,
        subjectName: project.name,
        actor: input.actor ?? SYSTEM_ACTOR,
        detail: { organisationName: organisation.name, newOrganisation: false, ownerEmail: project.ownerEmail, plan: project.plan },
      });
      return project;
    });
  }

  /**
   * One admin, one server and one client key for a new project, as `svc init`
   * and the first-run setup hand them out (shown once). Call inside the
   * transaction that created the project, so it never exists without them.
   */
  async mintStarterKeys(projectId: string, actor: AuditActor = SYSTEM_ACTOR): Promise<{ admin: string; server: string; client: string }> {
    const keys = this.ctx.services.keys;
    return this.ctx.store.write(async () => {
      // Each mint reads the project's allowed origin under the project's lock.
      const mint = async (type: "admin" | "server" | "client") => (await keys.mint(projectId, { type, name: `first ${type} key`, actor })).key;
      const admin = await mint("admin");
      const server = await mint("server");
      const client = await mint("client");
      return { admin, server, client };
    });
  }

  /** The organisation's longest-standing owner (the default owner of a project added to it), or null. */
  async firstOwnerEmail(organisationId: string): Promise<string | null> {
    return findFirstOwnerEmail(this.ctx.store, organisationId);
  }

  async organisation(id: string): Promise<Organisation | null> {
    return findOrganisation(this.ctx.store, id);
  }

  /** Every project of the organisations the person belongs to, by organisation then name. */
  async listForUser(userId: string): Promise<Project[]> {
    return listProjectsOfUser(this.ctx.store, userId);
  }

  /**
   * The user of an email (case-insensitive), made when there is none. Joins
   * the caller's transaction when there is one. No lock: the insert does
   * nothing when a concurrent one made the user first, and the row is read back.
   */
  async findOrCreateUser(email: string): Promise<User> {
    const normalised = email.trim().toLowerCase();
    const existing = await findUserByEmail(this.ctx.store, normalised);
    if (existing) return existing;
    return this.ctx.store.write(async (tx) => {
      await insertUserIfAbsent(tx, newId("usr"), normalised, nowIso());
      const user = await findUserByEmail(this.ctx.store, normalised);
      if (!user) throw new Error(`user ${normalised} vanished while being created`);
      return user;
    });
  }

  async countProjects(): Promise<number> {
    return countProjects(this.ctx.store);
  }

  async find(id: string): Promise<Project | null> {
    return findProject(this.ctx.store, id);
  }

  async get(id: string): Promise<Project> {
    const project = await this.find(id);
    if (!project) throw notFound(`Project ${id} not found`);
    return project;
  }

  async organisationOf(projectId: string): Promise<Organisation | null> {
    return findOrganisationOfProject(this.ctx.store, projectId);
  }

  /** Origin SDK keys of this project accept from browsers, or null for any. */
  async allowedOrigin(projectId: string): Promise<string | null> {
    const project = await this.find(projectId);
    return project ? parseDomain(project.domain).origin : null;
  }

  /** Every origin SDK keys of this project accept from browsers (the domain's first), or null for any. */
  async admittedOrigins(projectId: string): Promise<string[] | null> {
    const project = await this.find(projectId);
    return project ? admittedOrigins(project) : null;
  }

  /**
   * Applies only the fields sent, under the project's lock. A new domain is
   * stamped into every live SDK key in the same transaction, so no key is
   * ever left with the old origin.
   */
  /** Every project's raw-event retention in days (the analytics retention job). */
  listRetention(): Promise<{ id: string; eventRetentionDays: number }[]> {
    return projectRetentions(this.ctx.store);
  }

  async update(id: string, input: ProjectPatch, actor: AuditActor = SYSTEM_ACTOR): Promise<Project> {
    const patch: ProjectPatch = { ...input };
    let newOrigin: string | null | undefined;

    if (patch.name !== undefined) {
      if (patch.name.trim() === "") throw validation("name must not be empty", "name: at least one non-space character");
      checkNameChars("name", patch.name);
      patch.name = patch.name.trim();
    }
    if (patch.slug !== undefined && !/^[a-z0-9](?:[a-z0-9-]{0,62})$/.test(patch.slug)) {
      throw validation("slug must be lowercase letters, digits and hyphens", "slug: 1-63 chars of a-z, 0-9 and -, starting with a letter or digit");
    }
    if (patch.timezone !== undefined && !isValidTimezone(patch.timezone)) {
      throw validation(`Unknown time zone ${patch.timezone}`, "timezone: an IANA name such as UTC or Europe/Berlin");
    }
    if (patch.eventRetentionDays !== undefined && !(Number.isInteger(patch.eventRetentionDays) && patch.eventRetentionDays >= 1 && patch.eventRetentionDays <= 365)) {
      throw validation("eventRetentionDays must be a whole number of days from 1 to 365", "eventRetentionDays: 1 to 365");
    }
    if (patch.staleAfterDays !== undefined && !(Number.isInteger(patch.staleAfterDays) && patch.staleAfterDays >= 1 && patch.staleAfterDays <= 365)) {
      throw validation("staleAfterDays must be a whole number of days from 1 to 365", "staleAfterDays: 1 to 365");
    }
    if (patch.domain !== undefined) {
      const parsed = parseDomain(patch.domain);
      patch.domain = parsed.domain;
      newOrigin = parsed.origin;
    }
    if (patch.allowedOrigins !== undefined) patch.allowedOrigins = parseAllowedOrigins(patch.allowedOrigins);

    return this.ctx.store.write(async (tx) => {
      // Built per attempt: the store may run this function again (a retried transaction).
      const fields: Partial<Record<PatchableField, string | number>> = {};
      const changed: Record<string, unknown> = {};
      for (const field of Object.keys(PATCHABLE_COLUMNS) as PatchableField[]) {
        const value = patch[field];
        if (value === undefined) continue;
        fields[field] = typeof value === "boolean" ? (value ? 1 : 0) : Array.isArray(value) ? JSON.stringify(value) : value;
        changed[field] = value;
      }
      await tx.lock(`project:${id}`);
      const current = await this.get(id);
      let analysisJson: string | undefined;
      if (patch.analysis !== undefined) {
        const analysis = { ...current.analysis, ...patch.analysis };
        analysisJson = JSON.stringify(analysis);
        changed.analysis = analysis;
      }
      // `changed` has one entry per column to set.
      if (Object.keys(changed).length === 0) return current;
      await updateProject(tx, id, { fields, analysis: analysisJson, updatedAt: nowIso() });
      if (newOrigin !== undefined || patch.allowedOrigins !== undefined) {
        const origins = admittedOrigins({ domain: patch.domain ?? current.domain, allowedOrigins: patch.allowedOrigins ?? current.allowedOrigins });
        await this.ctx.services.keys.stampAllowedOrigin(id, newOrigin !== undefined ? newOrigin : parseDomain(current.domain).origin, origins);
      }
      // The module flags decide what the snapshot publishes (translations): SDKs must see the change.
      if (patch.moduleTranslations !== undefined && patch.moduleTranslations !== current.moduleTranslations) {
        await bumpEveryEnv(tx, id);
      }
      const updated = await this.get(id);
      await recordAudit(tx, {
        projectId: id,
        organisationId: updated.organisationId,
        action: "project.update",
        subjectId: id,
        subjectName: updated.name,
        actor,
        detail: { changed },
      });
      return updated;
    });
  }

  private async newProject(
    tx: Tx,
    organisationId: string,
    input: { name: string; ownerEmail: string; plan: string; publicTicketCreation: boolean },
  ): Promise<Project> {
    const now = new Date();
    const periodEnd = new Date(now.getTime() + 30 * 24 * 3600 * 1000);
    const id = newUuid();
    await insertProject(tx, {
      id,
      organisationId,
      name: input.name,
      slug: slugify(input.name),
      ownerEmail: input.ownerEmail,
      plan: input.plan,
      currentPeriodEnd: periodEnd.toISOString(),
      publicTicketCreation: input.publicTicketCreation ? 1 : 0,
      analysis: JSON.stringify(DEFAULT_ANALYSIS),
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    });
    return this.get(id);
  }
}
