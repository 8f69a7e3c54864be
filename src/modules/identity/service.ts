import { join } from "node:path";
import { tmpdir } from "node:os";
import { type AuditActor, SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { ORGANISATIONS_LOCK } from "../projects/service";
import { alreadyExists, badRequest, forbidden, notFound, validation } from "../../lib/errors";
import { newId, randomBase62, sha256Hex } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Store, Tx } from "../../lib/store";
import {
  type InvitationRow,
  CLEANUP_BATCH,
  countOwners,
  countUsers,
  deleteInBatches,
  deleteExpiredOidcLogins,
  deleteInvitation,
  deleteMembership,
  deleteSetupLinks,
  findBoundUserId,
  findFirstOrganisationId,
  findInvitation,
  findPendingInvitationOfLink,
  findLiveSession,
  findMemberByEmail,
  findMemberById,
  findMembershipByEmail,
  findOrganisationIdOfProject,
  findRoleInOrganisation,
  findRoleInProject,
  hasIdentityAt,
  hasUsableLink,
  insertIdentity,
  insertInvitation,
  insertMembership,
  insertOidcLogin,
  insertOwnerMembershipIfAbsent,
  insertSession,
  insertSignInLink,
  listAccessibleProjects,
  listMembers,
  purgeExpiredInvitations,
  purgeExpiredOidcLogins,
  purgeExpiredSessions,
  purgeExpiredSignInLinks,
  revokeSession,
  spendSignInLink,
  takeInvitationOfLink,
  takeOidcLogin,
  touchIdentity,
  updateInvitationRole,
  updateMemberRole,
  useSignInLink,
} from "./store";
import { createMailer, type Mailer, type SignInMail } from "./mail";
import { OidcClient, OidcError, type OidcIdentity, sealPendingLogin, unsealPendingLogin } from "./oidc";
import { DEFAULT_RATE_LIMITS, type SignInOptions, type SignInRateLimits } from "./options";
import { RateLimiter } from "../../lib/rate-limit";
import { ROLES, type Role, type SignedInUser, type AccessibleProject, type Member } from "./types";
export { ROLES, type Role, type SignedInUser, type AccessibleProject, type Member };

// The device module runs its cleanup through these.
export { CLEANUP_BATCH, deleteInBatches };

/** Where mail goes without SMTP when the server named no outbox (`<data>/outbox.log` in `svc serve`). */
export const FALLBACK_OUTBOX_PATH = join(tmpdir(), "svc-memory", "outbox.log");

export const MAGIC_LINK_TTL_MS = 15 * 60_000;
export const INVITE_LINK_TTL_MS = 7 * 24 * 3600_000;
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** The first-run setup link; every start of a still-empty server prints a fresh one. */
export const SETUP_LINK_TTL_MS = 24 * 3600_000;
const OIDC_LOGIN_TTL_MS = 10 * 60_000;

export const DEFAULT_INVITE_ROLE: Role = "editor";

export type Invitation = { email: string; role: Role; organisationId: string; organisationName: string; createdAt: string; expiresAt: string; status: "invited" };

/** How a person signed in, as their `session.signin` audit rows say. */
export type SignInMethod = "magic-link" | "oidc" | "setup";

/** What a finished browser sign-in hands to the routes: the session secret for the cookie, and where to go. */
export type SignInResult = { sessionToken: string; user: SignedInUser; redirect: string | undefined };

/** Lock scope of an organisation's memberships (who belongs, who owns). */
export function organisationLock(organisationId: string): string {
  return `org:${organisationId}`;
}
/** Lock scope of first-run work (setup link, first owner, SERVICE_ADMIN_EMAIL). */
const SETUP_LOCK = "identity:setup";

/**
 * People and their browser sign-in: members of organisations, single-use
 * links (magic links, the first-run setup link), sessions, OIDC and
 * invitations. Only SHA-256 hashes of every secret are stored.
 *
 * Nothing about sessions or memberships is cached: every request reads them
 * from the store, so a sign-out, a removal or a role change holds on every
 * server from the next request on.
 */
export class IdentityService {
  readonly now: () => number;
  readonly limiter: RateLimiter;
  readonly rateLimits: SignInRateLimits;
  readonly oidc: OidcClient | null;
  readonly options: SignInOptions;
  /** Where mail goes without SMTP (and where the first-run setup link is kept). */
  readonly outboxPath: string;
  private readonly mailer: Mailer;

  constructor(private readonly ctx: ServiceContext) {
    const options = ctx.options.signIn ?? {};
    this.options = options;
    this.now = options.now ?? Date.now;
    this.limiter = new RateLimiter(this.now);
    this.rateLimits = { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
    this.oidc = options.oidc ? new OidcClient(options.oidc, this.now) : null;
    this.outboxPath = ctx.options.outboxPath ?? FALLBACK_OUTBOX_PATH;
    this.mailer = options.mailer ?? createMailer({ ...options, outboxPath: this.outboxPath });
  }

  private get store(): Store {
    return this.ctx.store;
  }

  private iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  // People and what they reach.

  /** A user who belongs to at least one organisation: only they may sign in. */
  async findMember(email: string): Promise<SignedInUser | null> {
    return findMemberByEmail(this.store, email.trim());
  }

  async accessibleProjects(userId: string): Promise<AccessibleProject[]> {
    return listAccessibleProjects(this.store, userId);
  }

  /** The person's role in the organisation of the project, or null when they are not a member. */
  async roleIn(userId: string, projectId: string): Promise<Role | null> {
    return findRoleInProject(this.store, projectId, userId);
  }

  /** The person's role in an organisation, or null when they are not a member. */
  async roleInOrganisation(userId: string, organisationId: string): Promise<Role | null> {
    return findRoleInOrganisation(this.store, organisationId, userId);
  }

  async canAccess(userId: string, projectId: string): Promise<boolean> {
    return (await this.roleIn(userId, projectId)) !== null;
  }

  // Magic links.

  /**
   * Sends a sign-in link when `email` belongs to a member; for anyone else
   * it silently does nothing, so the answer never tells who has an account.
   */
  async requestMagicLink(email: string, input: { redirect: string | undefined; baseUrl: string; ip: string }): Promise<void> {
    const normalised = email.trim().toLowerCase();
    this.limiter.take(`magic-link:ip:${input.ip}`, this.rateLimits.magicLinkPerIp);
    this.limiter.take(`magic-link:email:${normalised}`, this.rateLimits.magicLinkPerEmail);
    const link = await this.store.write(async (tx) => {
      await tx.lock(`identity:email:${normalised}`);
      const user = await this.findMember(normalised);
      return user ? { email: user.email, token: await this.issueLink(tx, "magic", user.email, input.redirect, MAGIC_LINK_TTL_MS) } : null;
    });
    if (!link) return;
    this.dispatch({ to: link.email, url: `${input.baseUrl}/auth/magic?token=${link.token}`, reason: "sign-in" });
  }

  /** Whether a link is still usable, without using it (the GET that mail scanners may follow). */
  async isLinkUsable(token: string, purpose: "magic" | "setup"): Promise<boolean> {
    return hasUsableLink(this.store, sha256Hex(token), purpose, this.iso());
  }

  /**
   * Uses a magic link (once, before it expires) and opens a session for its
   * member. An invitation's link is accepted by its use: the person becomes
   * a member with the invited role, in the same transaction.
   */
  async consumeMagicLink(token: string): Promise<SignInResult> {
    const hash = sha256Hex(token);
    return this.store.write(async (tx) => {
      await tx.lock(`identity:link:${hash}`);
      const link = await this.takeLink(tx, token, "magic");
      const invitation = await takeInvitationOfLink(tx, hash);
      if (invitation) return this.acceptInvitation(tx, invitation, link.redirect);
      const user = link.email ? await this.findMember(link.email) : null;
      if (!user) throw badRequest("This sign-in link no longer matches a member", "token: ask an owner to invite you again");
      return { sessionToken: await this.createSession(tx, user, "magic-link"), user, redirect: link.redirect ?? undefined };
    });
  }

  /** What an unused invitation link offers (for the page that asks to accept it); null for any other link. */
  async invitationOfLink(token: string): Promise<{ organisationName: string; role: Role } | null> {
    const row = await findPendingInvitationOfLink(this.store, sha256Hex(token), this.iso());
    return row ? { organisationName: row.organisation_name, role: row.role } : null;
  }

  /** Makes the invited person a member (`member.join`) and signs them in; in the transaction that took the invitation. */
  private async acceptInvitation(tx: Tx, invitation: { organisation_id: string; email: string; role: Role; expires_at: string }, redirect: string | null): Promise<SignInResult> {
    if (invitation.expires_at <= this.iso()) throw badRequest("This invitation has expired", "token: ask an owner to invite you again");
    await tx.lock(organisationLock(invitation.organisation_id));
    const created = await this.ctx.services.projects.findOrCreateUser(invitation.email);
    const user = { id: created.id, email: created.email };
    const actor = { email: user.email, type: "user" };
    // Already a member by another way (the first owner's address, say): the invitation is spent and the role left as it is.
    if ((await insertMembership(tx, invitation.organisation_id, user.id, invitation.role, this.iso())) > 0) {
      await recordAudit(tx, {
        projectId: null,
        organisationId: invitation.organisation_id,
        action: "member.join",
        subjectId: user.id,
        subjectName: user.email,
        actor,
        detail: { via: "invitation link", role: invitation.role },
      });
    }
    // This sign-in happened in the organisation it joins: its row goes there.
    return { sessionToken: await this.createSession(tx, user, "magic-link", {}, [invitation.organisation_id]), user, redirect: redirect ?? undefined };
  }

  // Sessions.

  /** The person of a live session, read from the store on every call (a sign-out holds at once on every server). */
  async sessionUser(token: string | undefined): Promise<(SignedInUser & { sessionId: string }) | null> {
    if (!token) return null;
    return findLiveSession(this.store, sha256Hex(token), this.iso());
  }

  /** Signs out (a `session.signout` row of the person's own when the session was live: see createSession). */
  async endSession(token: string | undefined): Promise<void> {
    if (!token) return;
    const hash = sha256Hex(token);
    await this.store.write(async (tx) => {
      const now = this.iso();
      const user = await findLiveSession(tx, hash, now);
      if ((await revokeSession(tx, hash, now)) === 0 || !user) return;
      await recordAudit(tx, {
        projectId: null,
        organisationId: null,
        action: "session.signout",
        subjectId: user.id,
        subjectName: user.email,
        actor: { email: user.email, type: "user" },
      });
    });
  }

  // First run.

  /**
   * At server start. With `adminEmail` (SERVICE_ADMIN_EMAIL) that person is
   * made owner of the first organisation (a default one is created when
   * there is none) and signs in by magic link. Otherwise, while nobody
   * exists at all, it returns a fresh single-use setup link to print.
   */
  async bootstrap(input: { adminEmail?: string; baseUrl: string }): Promise<{ setupUrl: string } | null> {
    if (input.adminEmail) {
      await this.ensureAdmin(input.adminEmail);
      return null;
    }
    // Every start after the first finds people already: a read answers it without taking the write lock.
    if ((await countUsers(this.store)) > 0) return null;
    return this.store.write(async (tx) => {
      await tx.lock(SETUP_LOCK);
      if ((await countUsers(this.store)) > 0) return null;
      // One live setup link at a time: a restart replaces the one printed before.
      await deleteSetupLinks(tx);
      const token = await this.issueLink(tx, "setup", null, undefined, SETUP_LINK_TTL_MS);
      return { setupUrl: `${input.baseUrl}/setup?token=${token}` };
    });
  }

  /** The setup form: creates the first organisation, project and owner, and signs the owner in. */
  async completeSetup(
    token: string,
    input: { email: string; organisationName: string; projectName: string },
  ): Promise<SignInResult & { projectId: string; organisationId: string; organisationName: string; projectName: string; keys: { admin: string; server: string; client: string } }> {
    if (input.organisationName.trim() === "") throw validation("organisation must not be empty", "organisation: at least one non-space character");
    if (input.projectName.trim() === "") throw validation("project must not be empty", "project: at least one non-space character");
    return this.store.write(async (tx) => {
      await tx.lock(SETUP_LOCK);
      await this.takeLink(tx, token, "setup");
      if ((await countUsers(this.store)) > 0) throw badRequest("svc is already set up", "token: sign in at /signin instead");
      const projects = this.ctx.services.projects;
      // The person at the setup page is who made the organisation, its project and its first keys.
      const actor = { email: input.email.trim().toLowerCase(), type: "user" };
      const { user, project, organisation } = await projects.createOrganisationWithProject({
        projectName: input.projectName.trim(),
        organisationName: input.organisationName.trim(),
        ownerEmail: input.email,
        actor,
      });
      // The first owner leaves setup with working keys (shown once), as `svc init` hands them out.
      const keys = await projects.mintStarterKeys(project.id, actor);
      const member = { id: user.id, email: user.email };
      return {
        sessionToken: await this.createSession(tx, user, "setup", {}, [organisation.id]),
        user: member,
        redirect: undefined,
        projectId: project.id,
        projectName: project.name,
        organisationId: organisation.id,
        organisationName: organisation.name,
        keys,
      };
    });
  }

  // OIDC.

  /**
   * Starts a sign-in at the provider. The browser gets `<state>.<browserKey>`
   * (the `svc_oidc` cookie); the database keeps only sha256(state) and the
   * PKCE verifier and nonce sealed under a key derived from browserKey, so
   * that a copy of the database cannot finish anybody's sign-in.
   */
  async beginOidc(input: { redirect: string | undefined; baseUrl: string }): Promise<{ url: string; cookie: string }> {
    if (!this.oidc) throw notFound("Single sign-on is not configured on this server");
    const state = randomBase62(32);
    const browserKey = randomBase62(43);
    const nonce = randomBase62(32);
    const codeVerifier = randomBase62(64);
    // Discovery first: a provider that cannot be reached leaves no pending login behind.
    const url = await this.oidc.authorizationUrl({ redirectUri: `${input.baseUrl}/auth/oidc/callback`, state, nonce, codeVerifier });
    const stateHash = sha256Hex(state);
    const sealed = sealPendingLogin(browserKey, stateHash, { codeVerifier, nonce });
    const now = this.now();
    await this.store.write(async (tx) => {
      await deleteExpiredOidcLogins(tx, this.iso(now));
      await insertOidcLogin(tx, { stateHash, sealed, redirect: input.redirect ?? null, createdAt: this.iso(now), expiresAt: this.iso(now + OIDC_LOGIN_TTL_MS) });
    });
    return { url, cookie: `${state}.${browserKey}` };
  }

  /**
   * The provider's redirect back (`callback`: every query parameter it
   * sent). The state must be the one of this browser's cookie, its pending
   * login unused and unexpired (it is deleted here: single use) and
   * unsealed by the cookie's key; then openid-client exchanges the code and
   * checks the id_token, and the account bound to (issuer, subject) signs in.
   */
  async finishOidc(input: { callback: URLSearchParams; stateCookie: string | undefined; baseUrl: string }): Promise<SignInResult> {
    if (!this.oidc) throw notFound("Single sign-on is not configured on this server");
    const state = input.callback.get("state");
    const dot = input.stateCookie?.indexOf(".") ?? -1;
    const cookieState = dot > 0 ? input.stateCookie!.slice(0, dot) : "";
    const browserKey = dot > 0 ? input.stateCookie!.slice(dot + 1) : "";
    if (!state || !cookieState || !browserKey || state !== cookieState) {
      throw new OidcError("This sign-in was started in another browser or has expired; start again", 401);
    }
    const stateHash = sha256Hex(state);
    const now = this.iso();
    // Taken (deleted) by one statement: of two callbacks with the same state, only one gets the row.
    const login = await this.store.write((tx) => takeOidcLogin(tx, stateHash));
    if (!login || login.expires_at <= now) throw new OidcError("This sign-in was already used or has expired; start again", 401);
    const secrets = unsealPendingLogin(browserKey, stateHash, login.sealed);
    if (!secrets) throw new OidcError("This sign-in was started in another browser; start again", 401);
    if (!input.callback.get("code")) throw new OidcError("The identity provider sent no authorization code", 502);
    const callbackUrl = new URL(`${input.baseUrl}/auth/oidc/callback`);
    for (const [name, value] of input.callback) callbackUrl.searchParams.append(name, value);
    const identity = await this.oidc.signIn({ callbackUrl, codeVerifier: secrets.codeVerifier, state, nonce: secrets.nonce });
    return this.store.write(async (tx) => {
      const user = await this.oidcAccount(tx, identity);
      return { sessionToken: await this.createSession(tx, user, "oidc", { issuer: identity.issuer }), user, redirect: login.redirect ?? undefined };
    });
  }

  // Invitations and members.

  /**
   * Invites a person to the organisation of the project: a pending
   * invitation and a link valid 7 days (by mail, or to the outbox without
   * SMTP). They become a member only when they use the link (accepting
   * it); until then they reach nothing. ALREADY_EXISTS when they are a
   * member or have a pending invitation; an expired one is replaced.
   */
  async invite(projectId: string, input: { email: string; role?: Role }, baseUrl: string, actor: AuditActor = SYSTEM_ACTOR): Promise<Invitation> {
    const { token, ...result } = await this.createInvitation(projectId, input, actor);
    this.dispatch({ to: result.email, url: `${baseUrl}/auth/magic?token=${token}`, reason: "invite", organisationName: result.organisationName });
    return result;
  }

  /** The invitation and its link's secret, without sending it (invite sends it; tests accept it directly). */
  async createInvitation(projectId: string, input: { email: string; role?: Role }, actor: AuditActor = SYSTEM_ACTOR): Promise<Invitation & { token: string }> {
    const role = input.role ?? DEFAULT_INVITE_ROLE;
    const email = input.email.trim().toLowerCase();
    return this.store.write(async (tx) => {
      // A project never changes organisation: reading it before the lock is safe.
      const organisation = await this.ctx.services.projects.organisationOf(projectId);
      if (!organisation) throw notFound(`Project ${projectId} not found`);
      await tx.lock(organisationLock(organisation.id));
      if (await findMembershipByEmail(tx, organisation.id, email)) throw alreadyExists(`${email} is already a member of this organisation`, "email");
      const nowMs = this.now();
      const pending = await findInvitation(tx, organisation.id, email);
      if (pending && pending.expires_at > this.iso(nowMs)) {
        throw alreadyExists(`${email} is already invited to this organisation (until ${pending.expires_at})`, "email: remove the invitation (DELETE /api/admin/members/{email}) to send a new one");
      }
      if (pending) await deleteInvitation(tx, pending.id);
      const token = await this.issueLink(tx, "magic", email, undefined, INVITE_LINK_TTL_MS, nowMs);
      const createdAt = this.iso(nowMs);
      const expiresAt = this.iso(nowMs + INVITE_LINK_TTL_MS);
      await insertInvitation(tx, {
        id: newId("inv"),
        organisation_id: organisation.id,
        email,
        role,
        token_hash: sha256Hex(token),
        invited_by: actor.email,
        created_at: createdAt,
        expires_at: expiresAt,
      });
      // Membership spans the organisation: a row of the organisation, shown in each of its projects.
      await recordAudit(tx, { projectId: null, organisationId: organisation.id, action: "member.invite", subjectName: email, actor, detail: { role, expiresAt } });
      return { email, role, organisationId: organisation.id, organisationName: organisation.name, createdAt, expiresAt, status: "invited" as const, token };
    });
  }

  async members(projectId: string): Promise<Member[]> {
    return listMembers(this.store, projectId, this.iso());
  }

  /** Changes a member's role (or a pending invitation's); the organisation keeps at least one owner. */
  async setRole(projectId: string, email: string, role: Role, actor: AuditActor = SYSTEM_ACTOR): Promise<Member> {
    return this.store.write(async (tx) => {
      const found = await this.lockedPerson(tx, projectId, email);
      if ("invitation" in found) {
        const { invitation } = found;
        await updateInvitationRole(tx, invitation.id, role);
        await recordAudit(tx, {
          projectId: null,
          organisationId: invitation.organisation_id,
          action: "member.role",
          subjectName: invitation.email,
          actor,
          detail: { from: invitation.role, to: role, status: "invited" },
        });
        return { email: invitation.email, role, status: "invited" as const, joinedAt: null, invitedAt: invitation.created_at, expiresAt: invitation.expires_at };
      }
      const { organisationId, userId, current } = found;
      if (current.role === "owner" && role !== "owner") await this.keepAnOwner(tx, organisationId);
      await updateMemberRole(tx, organisationId, userId, role);
      await recordAudit(tx, {
        projectId: null,
        organisationId,
        action: "member.role",
        subjectId: userId,
        subjectName: current.email,
        actor,
        detail: { from: current.role, to: role },
      });
      return { ...current, role };
    });
  }

  /**
   * Removes a person from the organisation, never the last owner; or
   * withdraws their pending invitation (its link then signs nobody in). A
   * member's CLI sign-ins end in the same transaction (one
   * `device.token.revoke` row each), so adding them again revives none.
   */
  async removeMember(projectId: string, email: string, actor: AuditActor = SYSTEM_ACTOR): Promise<void> {
    await this.store.write(async (tx) => {
      const found = await this.lockedPerson(tx, projectId, email);
      if ("invitation" in found) {
        const { invitation } = found;
        await deleteInvitation(tx, invitation.id);
        // Its link would still sign in a person who has an account elsewhere: it is spent with the invitation.
        await spendSignInLink(tx, invitation.token_hash, this.iso());
        await recordAudit(tx, {
          projectId: null,
          organisationId: invitation.organisation_id,
          action: "member.uninvite",
          subjectName: invitation.email,
          actor,
          detail: { role: invitation.role },
        });
        return;
      }
      const { organisationId, userId, current } = found;
      if (current.role === "owner") await this.keepAnOwner(tx, organisationId);
      await deleteMembership(tx, organisationId, userId);
      const cliSignInsRevoked = await this.ctx.services.device.revokeForRemoval(tx, userId, organisationId, actor);
      await recordAudit(tx, {
        projectId: null,
        organisationId,
        action: "member.remove",
        subjectId: userId,
        subjectName: current.email,
        actor,
        detail: { role: current.role, cliSignInsRevoked },
      });
    });
  }

  /**
   * Deletes expired or revoked sessions, expired sign-in links and pending
   * OIDC logins, in batches of 500 rows per transaction (the write lock is
   * held briefly). Answers how many rows of each went.
   */
  async removeExpired(): Promise<{ sessions: number; signInLinks: number; oidcLogins: number; invitations: number }> {
    const now = this.iso();
    return {
      sessions: await purgeExpiredSessions(this.store, now),
      signInLinks: await purgeExpiredSignInLinks(this.store, now),
      oidcLogins: await purgeExpiredOidcLogins(this.store, now),
      invitations: await purgeExpiredInvitations(this.store, now),
    };
  }

  /** Whether anybody exists yet (then the setup link has no use). */
  async isSetUp(): Promise<boolean> {
    return (await countUsers(this.store)) > 0;
  }

  // Internals.

  private async ensureAdmin(email: string): Promise<void> {
    await this.store.write(async (tx) => {
      await tx.lock(SETUP_LOCK);
      // The same lock as every organisation creation (and the headless first start): one first organisation across servers.
      await tx.lock(ORGANISATIONS_LOCK);
      if (await this.findMember(email)) return;
      const firstId = await findFirstOrganisationId(tx);
      const projects = this.ctx.services.projects;
      if (!firstId) {
        await projects.createOrganisationWithProject({ projectName: "Default project", organisationName: "Default organisation", ownerEmail: email });
        return;
      }
      await tx.lock(organisationLock(firstId));
      const user = await projects.findOrCreateUser(email);
      if ((await insertOwnerMembershipIfAbsent(tx, firstId, user.id, this.iso())) === 0) return;
      await recordAudit(tx, {
        projectId: null,
        organisationId: firstId,
        action: "member.add",
        subjectId: user.id,
        subjectName: user.email,
        actor: SYSTEM_ACTOR,
        detail: { role: "owner", via: "SERVICE_ADMIN_EMAIL" },
      });
    });
  }

  /**
   * Locks the organisation of the project (`org:<id>`), then reads the
   * person's membership there, else their pending invitation; call inside
   * the transaction that changes it.
   */
  private async lockedPerson(
    tx: Tx,
    projectId: string,
    email: string,
  ): Promise<{ organisationId: string; userId: string; current: Member & { status: "active" } } | { invitation: InvitationRow }> {
    const notMember = () => notFound(`${email} is not a member of this organisation`, "email: see GET /api/admin/members");
    // A project never changes organisation: reading it before the lock is safe.
    const organisationId = await findOrganisationIdOfProject(tx, projectId);
    if (!organisationId) throw notMember();
    await tx.lock(organisationLock(organisationId));
    const row = await findMembershipByEmail(tx, organisationId, email.trim());
    if (row) return { organisationId: row.organisation_id, userId: row.user_id, current: { email: row.email, role: row.role, status: "active", joinedAt: row.created_at } };
    const invitation = await findInvitation(tx, organisationId, email.trim());
    if (invitation && invitation.expires_at > this.iso()) return { invitation };
    throw notMember();
  }

  /** Refuses a change that would leave the organisation without an owner (call under the organisation's lock, before removing or demoting one). */
  private async keepAnOwner(tx: Tx, organisationId: string): Promise<void> {
    if ((await countOwners(tx, organisationId)) <= 1) throw forbidden("An organisation needs at least one owner", "role: make someone else owner first");
  }

  private async issueLink(tx: Tx, purpose: "magic" | "setup", email: string | null, redirect: string | undefined, ttlMs: number, now = this.now()): Promise<string> {
    const token = randomBase62(43);
    await insertSignInLink(tx, {
      tokenHash: sha256Hex(token),
      purpose,
      email: email === null ? null : email.toLowerCase(),
      redirect: redirect ?? null,
      createdAt: this.iso(now),
      expiresAt: this.iso(now + ttlMs),
    });
    return token;
  }

  /** Marks a link used (one statement: of two uses, one wins); call inside the transaction that acts on it. */
  private async takeLink(tx: Tx, token: string, purpose: "magic" | "setup"): Promise<{ email: string | null; redirect: string | null; created_at: string }> {
    const now = this.iso();
    const link = await useSignInLink(tx, sha256Hex(token), purpose, now);
    if (!link) {
      throw badRequest(
        purpose === "setup" ? "This setup link is invalid, used or expired" : "This sign-in link is invalid, used or expired",
        purpose === "setup" ? "token: restart the server for a new setup link" : "token: request a new link at /signin",
      );
    }
    return link;
  }

  /**
   * Opens a session and records the sign-in (`session.signin`), in the same
   * transaction: in the organisations it happened in (`organisationIds`: the
   * one set up, or the one whose invitation it accepts), else as the
   * person's own row, in no organisation's trail. A plain sign-in opens no
   * organisation in particular: were it recorded in each of the person's,
   * every organisation would learn when they work for another.
   */
  private async createSession(tx: Tx, user: { id: string; email: string }, method: SignInMethod, facts: Record<string, string> = {}, organisationIds: readonly string[] = []): Promise<string> {
    const token = randomBase62(43);
    const now = this.now();
    const sessionId = newId("ses");
    await insertSession(tx, { id: sessionId, tokenHash: sha256Hex(token), userId: user.id, createdAt: this.iso(now), expiresAt: this.iso(now + SESSION_TTL_MS) });
    const entry = { action: "session.signin", subjectId: user.id, subjectName: user.email, actor: { email: user.email, type: "user" }, detail: { method, ...facts } };
    if (organisationIds.length === 0) await recordAudit(tx, { ...entry, projectId: null, organisationId: null });
    for (const organisationId of organisationIds) await recordAudit(tx, { ...entry, projectId: null, organisationId });
    return token;
  }

  /** Mail leaves after the answer: a slow SMTP server must not show who has an account by timing. */
  private dispatch(mail: SignInMail): void {
    this.mailer.send(mail).catch((err) => {
      this.ctx.log.error("sign-in mail failed", { email: mail.to, reason: mail.reason, error: String(err) });
    });
  }

  /**
   * The account an OIDC identity signs in as; call inside the sign-in's
   * transaction (it locks the issuer: bindings of one issuer are decided one
   * at a time). A known (issuer, subject) is its bound user, whatever email
   * the provider sends now (the binding's email and last use are updated),
   * as long as that user still belongs to an organisation. An unknown one is
   * bound to the member whose address the (verified) email is, unless that
   * member is already bound to another subject of the same issuer.
   */
  private async oidcAccount(tx: Tx, identity: OidcIdentity): Promise<SignedInUser> {
    await tx.lock(`identity:oidc:${identity.issuer}`);
    const now = this.iso();
    const boundUserId = await findBoundUserId(tx, identity.issuer, identity.subject);
    if (boundUserId) {
      const user = await findMemberById(this.store, boundUserId);
      if (!user) throw new OidcError("Your account here no longer belongs to any organisation; ask an owner to invite you", 403);
      await touchIdentity(tx, identity, now);
      return user;
    }
    const user = await this.findMember(identity.email);
    if (!user) throw new OidcError(`${identity.email} has no account here; ask an owner to invite you`, 403);
    if (await hasIdentityAt(tx, identity.issuer, user.id)) throw new OidcError("This account is linked to another identity at that provider", 403);
    await insertIdentity(tx, identity, user.id, now);
    return user;
  }
}
