import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { type Db, writeTransaction } from "../../lib/db";
import type { Logger } from "../../lib/log";
import { alreadyExists, badRequest, forbidden, notFound, validation } from "../../lib/errors";
import { newId, randomBase62, sha256Hex } from "../../lib/ids";
import type { ProjectsService } from "../projects/service";
import { createMailer, type Mailer, type SignInMail } from "./mail";
import { OidcClient, OidcError, type OidcIdentity, sealPendingLogin, unsealPendingLogin } from "./oidc";
import { DEFAULT_RATE_LIMITS, type SignInOptions, type SignInRateLimits } from "./options";
import { RateLimiter } from "./rate-limit";

/** Runs a batched DELETE (500 rows a transaction, `?1` = now) until nothing is left; the number deleted. */
export async function deleteInBatches(db: Db, sql: string, now: string): Promise<number> {
  let total = 0;
  for (;;) {
    const changes = await writeTransaction(db, () => db.query(sql).run(now).changes);
    total += changes;
    if (changes < 500) return total;
  }
}

/** `<data>/outbox.log`: beside the database (mail without SMTP goes there, DECISIONS.md "Mail"). */
export function outboxPathOf(db: Db): string {
  return join(dirname(db.filename === ":memory:" || db.filename === "" ? join(tmpdir(), "svc-memory", "x") : db.filename), "outbox.log");
}

export const MAGIC_LINK_TTL_MS = 15 * 60_000;
export const INVITE_LINK_TTL_MS = 7 * 24 * 3600_000;
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** The first-run setup link; every start of a still-empty server prints a fresh one. */
export const SETUP_LINK_TTL_MS = 24 * 3600_000;
const OIDC_LOGIN_TTL_MS = 10 * 60_000;

/** A viewer reads; an editor also writes; an owner also manages members, keys, tokens and settings. */
export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export const DEFAULT_INVITE_ROLE: Role = "editor";

export type SignedInUser = { id: string; email: string };
export type AccessibleProject = { id: string; name: string; organisationId: string; organisationName: string };
export type Member = { email: string; role: Role; joinedAt: string };
export type Invitation = { email: string; role: Role; organisationId: string; organisationName: string; createdAt: string };

/** What a finished browser sign-in hands to the routes: the session secret for the cookie, and where to go. */
export type SignInResult = { sessionToken: string; user: SignedInUser; redirect: string | undefined };

/**
 * People and their browser sign-in: members of organisations, single-use
 * links (magic links, the first-run setup link), sessions, OIDC and
 * invitations. Only SHA-256 hashes of every secret are stored.
 */
export class IdentityService {
  readonly now: () => number;
  readonly limiter: RateLimiter;
  readonly rateLimits: SignInRateLimits;
  readonly oidc: OidcClient | null;
  private readonly mailer: Mailer;
  private readonly roleStatement;
  private readonly sessionStatement;

  constructor(
    private readonly db: Db,
    private readonly projects: ProjectsService,
    readonly options: SignInOptions = {},
    private readonly log?: Logger,
  ) {
    this.now = options.now ?? Date.now;
    this.limiter = new RateLimiter(this.now);
    this.rateLimits = { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
    this.oidc = options.oidc ? new OidcClient(options.oidc, this.now) : null;
    this.mailer = options.mailer ?? createMailer({ ...options, outboxPath: outboxPathOf(db) });
    this.roleStatement = db.prepare<{ role: Role }, [string, string]>(
      `SELECT m.role FROM projects p JOIN memberships m ON m.organisation_id = p.organisation_id
       WHERE p.id = ? AND m.user_id = ?`,
    );
    this.sessionStatement = db.prepare<{ id: string; user_id: string; email: string }, [string, string]>(
      `SELECT s.id, s.user_id, u.email FROM sessions s JOIN users u ON u.id = s.user_id
       WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
    );
  }

  private iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  // People and what they reach.

  /** A user who belongs to at least one organisation: only they may sign in. */
  findMember(email: string): SignedInUser | null {
    return (
      this.db
        .query<SignedInUser, [string]>(
          "SELECT u.id, u.email FROM users u WHERE u.email = ? AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)",
        )
        .get(email.trim().toLowerCase()) ?? null
    );
  }

  accessibleProjects(userId: string): AccessibleProject[] {
    return this.db
      .query<AccessibleProject, [string]>(
        `SELECT p.id, p.name, o.id AS organisationId, o.name AS organisationName
         FROM memberships m JOIN organisations o ON o.id = m.organisation_id JOIN projects p ON p.organisation_id = o.id
         WHERE m.user_id = ? ORDER BY o.name, o.id, p.name, p.id`,
      )
      .all(userId);
  }

  /** The person's role in the organisation of the project, or null when they are not a member. */
  roleIn(userId: string, projectId: string): Role | null {
    return this.roleStatement.get(projectId, userId)?.role ?? null;
  }

  /** The person's role in an organisation, or null when they are not a member. */
  roleInOrganisation(userId: string, organisationId: string): Role | null {
    return (
      this.db
        .query<{ role: Role }, [string, string]>("SELECT role FROM memberships WHERE organisation_id = ? AND user_id = ?")
        .get(organisationId, userId)?.role ?? null
    );
  }

  canAccess(userId: string, projectId: string): boolean {
    return this.roleIn(userId, projectId) !== null;
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
    const link = await writeTransaction(this.db, () => {
      const user = this.findMember(normalised);
      return user ? { email: user.email, token: this.issueLink("magic", user.email, input.redirect, MAGIC_LINK_TTL_MS) } : null;
    });
    if (!link) return;
    this.dispatch({ to: link.email, url: `${input.baseUrl}/auth/magic?token=${link.token}`, reason: "sign-in" });
  }

  /** Whether a link is still usable, without using it (the GET that mail scanners may follow). */
  isLinkUsable(token: string, purpose: "magic" | "setup"): boolean {
    return (
      this.db
        .query("SELECT 1 FROM sign_in_links WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?")
        .get(sha256Hex(token), purpose, this.iso()) !== null
    );
  }

  /** Uses a magic link (once, before it expires) and opens a session for its member. */
  async consumeMagicLink(token: string): Promise<SignInResult> {
    return writeTransaction(this.db, () => {
      const link = this.takeLink(token, "magic");
      const user = link.email ? this.findMember(link.email) : null;
      if (!user) throw badRequest("This sign-in link no longer matches a member", "token: ask an owner to invite you again");
      return { sessionToken: this.createSession(user.id), user, redirect: link.redirect ?? undefined };
    });
  }

  // Sessions.

  sessionUser(token: string | undefined): (SignedInUser & { sessionId: string }) | null {
    if (!token) return null;
    const row = this.sessionStatement.get(sha256Hex(token), this.iso());
    return row ? { id: row.user_id, email: row.email, sessionId: row.id } : null;
  }

  async endSession(token: string | undefined): Promise<void> {
    if (!token) return;
    await writeTransaction(this.db, () =>
      this.db.query("UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL").run(this.iso(), sha256Hex(token)),
    );
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
    return writeTransaction(this.db, () => {
      if (this.countUsers() > 0) return null;
      // One live setup link at a time: a restart replaces the one printed before.
      this.db.query("DELETE FROM sign_in_links WHERE purpose = 'setup'").run();
      const token = this.issueLink("setup", null, undefined, SETUP_LINK_TTL_MS);
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
    return writeTransaction(this.db, () => {
      this.takeLink(token, "setup");
      if (this.countUsers() > 0) throw badRequest("svc is already set up", "token: sign in at /signin instead");
      const { user, project, organisation } = this.projects.createOrganisationWithProject({
        projectName: input.projectName.trim(),
        organisationName: input.organisationName.trim(),
        ownerEmail: input.email,
      });
      // The first owner leaves setup with working keys (shown once), as `svc init` hands them out.
      const keys = this.projects.mintStarterKeys(project.id);
      const member = { id: user.id, email: user.email };
      return {
        sessionToken: this.createSession(user.id),
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
    await writeTransaction(this.db, () => {
      this.db.query("DELETE FROM oidc_logins WHERE expires_at <= ?").run(this.iso(now));
      this.db
        .query("INSERT INTO oidc_logins (state_hash, sealed, redirect, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
        .run(stateHash, sealed, input.redirect ?? null, this.iso(now), this.iso(now + OIDC_LOGIN_TTL_MS));
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
    const login = await writeTransaction(this.db, () =>
      this.db
        .query<{ sealed: string; redirect: string | null; expires_at: string }, [string]>(
          "DELETE FROM oidc_logins WHERE state_hash = ? RETURNING sealed, redirect, expires_at",
        )
        .get(stateHash),
    );
    if (!login || login.expires_at <= now) throw new OidcError("This sign-in was already used or has expired; start again", 401);
    const secrets = unsealPendingLogin(browserKey, stateHash, login.sealed);
    if (!secrets) throw new OidcError("This sign-in was started in another browser; start again", 401);
    if (!input.callback.get("code")) throw new OidcError("The identity provider sent no authorization code", 502);
    const callbackUrl = new URL(`${input.baseUrl}/auth/oidc/callback`);
    for (const [name, value] of input.callback) callbackUrl.searchParams.append(name, value);
    const identity = await this.oidc.signIn({ callbackUrl, codeVerifier: secrets.codeVerifier, state, nonce: secrets.nonce });
    return writeTransaction(this.db, () => {
      const user = this.oidcAccount(identity);
      return { sessionToken: this.createSession(user.id), user, redirect: login.redirect ?? undefined };
    });
  }

  // Invitations and members.

  /**
   * Adds a person to the organisation of the project and sends them a
   * sign-in link valid 7 days (by mail, or to the outbox without SMTP).
   */
  async invite(projectId: string, input: { email: string; role?: Role }, baseUrl: string): Promise<Invitation> {
    const role = input.role ?? DEFAULT_INVITE_ROLE;
    const invitation = await writeTransaction(this.db, () => {
      const organisation = this.projects.organisationOf(projectId);
      if (!organisation) throw notFound(`Project ${projectId} not found`);
      const user = this.projects.findOrCreateUser(input.email);
      const createdAt = this.iso();
      const inserted = this.db
        .query("INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .run(organisation.id, user.id, role, createdAt).changes;
      if (inserted === 0) throw alreadyExists(`${user.email} is already a member of this organisation`, "email");
      const token = this.issueLink("magic", user.email, undefined, INVITE_LINK_TTL_MS);
      return { email: user.email, role, organisationId: organisation.id, organisationName: organisation.name, createdAt, token };
    });
    const { token, ...result } = invitation;
    this.dispatch({ to: result.email, url: `${baseUrl}/auth/magic?token=${token}`, reason: "invite", organisationName: result.organisationName });
    return result;
  }

  members(projectId: string): Member[] {
    return this.db
      .query<Member, [string]>(
        `SELECT u.email, m.role, m.created_at AS joinedAt FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.organisation_id = (SELECT organisation_id FROM projects WHERE id = ?) ORDER BY m.created_at, u.email`,
      )
      .all(projectId);
  }

  /** Changes a member's role; the organisation keeps at least one owner. */
  async setRole(projectId: string, email: string, role: Role): Promise<Member> {
    return writeTransaction(this.db, () => {
      const { organisationId, userId, current } = this.membership(projectId, email);
      if (current.role === "owner" && role !== "owner") this.keepAnOwner(organisationId);
      this.db.query("UPDATE memberships SET role = ? WHERE organisation_id = ? AND user_id = ?").run(role, organisationId, userId);
      return { ...current, role };
    });
  }

  /** Removes a person from the organisation (their sessions and sign-ins there end with it); never the last owner. */
  async removeMember(projectId: string, email: string): Promise<void> {
    await writeTransaction(this.db, () => {
      const { organisationId, userId, current } = this.membership(projectId, email);
      if (current.role === "owner") this.keepAnOwner(organisationId);
      this.db.query("DELETE FROM memberships WHERE organisation_id = ? AND user_id = ?").run(organisationId, userId);
    });
  }

  /**
   * Deletes expired or revoked sessions, expired sign-in links and pending
   * OIDC logins, in small batches (the write lock is held briefly).
   * Answers how many rows of each went.
   */
  async removeExpired(): Promise<{ sessions: number; signInLinks: number; oidcLogins: number }> {
    const now = this.iso();
    const batch = (sql: string) => deleteInBatches(this.db, sql, now);
    return {
      sessions: await batch("DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE expires_at <= ?1 OR revoked_at IS NOT NULL LIMIT 500)"),
      signInLinks: await batch("DELETE FROM sign_in_links WHERE rowid IN (SELECT rowid FROM sign_in_links WHERE expires_at <= ?1 LIMIT 500)"),
      oidcLogins: await batch("DELETE FROM oidc_logins WHERE rowid IN (SELECT rowid FROM oidc_logins WHERE expires_at <= ?1 LIMIT 500)"),
    };
  }

  /** Whether anybody exists yet (then the setup link has no use). */
  isSetUp(): boolean {
    return this.countUsers() > 0;
  }

  // Internals.

  private countUsers(): number {
    return (this.db.query("SELECT COUNT(*) AS n FROM users").get() as { n: number }).n;
  }

  private async ensureAdmin(email: string): Promise<void> {
    await writeTransaction(this.db, () => {
      if (this.findMember(email)) return;
      const first = this.db.query<{ id: string }, []>("SELECT id FROM organisations ORDER BY created_at, rowid LIMIT 1").get();
      if (!first) {
        this.projects.createOrganisationWithProject({ projectName: "Default project", organisationName: "Default organisation", ownerEmail: email });
        return;
      }
      const user = this.projects.findOrCreateUser(email);
      this.db
        .query("INSERT INTO memberships (organisation_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?) ON CONFLICT DO NOTHING")
        .run(first.id, user.id, this.iso());
    });
  }

  private membership(projectId: string, email: string): { organisationId: string; userId: string; current: Member } {
    const row = this.db
      .query<{ organisation_id: string; user_id: string; email: string; role: Role; created_at: string }, [string, string]>(
        `SELECT m.organisation_id, m.user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.organisation_id = (SELECT organisation_id FROM projects WHERE id = ?) AND u.email = ?`,
      )
      .get(projectId, email.trim().toLowerCase());
    if (!row) throw notFound(`${email} is not a member of this organisation`, "email: see GET /api/admin/members");
    return { organisationId: row.organisation_id, userId: row.user_id, current: { email: row.email, role: row.role, joinedAt: row.created_at } };
  }

  /** Refuses a change that would leave the organisation without an owner (call before removing or demoting one). */
  private keepAnOwner(organisationId: string): void {
    const owners = (this.db.query("SELECT COUNT(*) AS n FROM memberships WHERE organisation_id = ? AND role = 'owner'").get(organisationId) as { n: number }).n;
    if (owners <= 1) throw forbidden("An organisation needs at least one owner", "role: make someone else owner first");
  }

  private issueLink(purpose: "magic" | "setup", email: string | null, redirect: string | undefined, ttlMs: number): string {
    const token = randomBase62(43);
    const now = this.now();
    this.db
      .query("INSERT INTO sign_in_links (token_hash, purpose, email, redirect, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(sha256Hex(token), purpose, email, redirect ?? null, this.iso(now), this.iso(now + ttlMs));
    return token;
  }

  /** Marks a link used; call inside the transaction that acts on it. */
  private takeLink(token: string, purpose: "magic" | "setup"): { email: string | null; redirect: string | null } {
    const now = this.iso();
    const link = this.db
      .query<{ email: string | null; redirect: string | null }, [string, string, string, string]>(
        `UPDATE sign_in_links SET used_at = ?1 WHERE token_hash = ?2 AND purpose = ?3 AND used_at IS NULL AND expires_at > ?4
         RETURNING email, redirect`,
      )
      .get(now, sha256Hex(token), purpose, now);
    if (!link) {
      throw badRequest(
        purpose === "setup" ? "This setup link is invalid, used or expired" : "This sign-in link is invalid, used or expired",
        purpose === "setup" ? "token: restart the server for a new setup link" : "token: request a new link at /signin",
      );
    }
    return link;
  }

  private createSession(userId: string): string {
    const token = randomBase62(43);
    const now = this.now();
    this.db
      .query("INSERT INTO sessions (id, token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run(newId("ses"), sha256Hex(token), userId, this.iso(now), this.iso(now + SESSION_TTL_MS));
    return token;
  }

  /** Mail leaves after the answer: a slow SMTP server must not show who has an account by timing. */
  private dispatch(mail: SignInMail): void {
    this.mailer.send(mail).catch((err) => {
      this.log?.error("sign-in mail failed", { email: mail.to, reason: mail.reason, error: String(err) });
    });
  }

  /**
   * The account an OIDC identity signs in as; call inside the sign-in's
   * transaction. A known (issuer, subject) is its bound user, whatever email
   * the provider sends now (the binding's email and last use are updated),
   * as long as that user still belongs to an organisation. An unknown one is
   * bound to the member whose address the (verified) email is, unless that
   * member is already bound to another subject of the same issuer.
   */
  private oidcAccount(identity: OidcIdentity): SignedInUser {
    const now = this.iso();
    const bound = this.db
      .query<{ user_id: string }, [string, string]>("SELECT user_id FROM user_identities WHERE issuer = ? AND subject = ?")
      .get(identity.issuer, identity.subject);
    if (bound) {
      const user = this.memberById(bound.user_id);
      if (!user) throw new OidcError("Your account here no longer belongs to any organisation; ask an owner to invite you", 403);
      this.db
        .query("UPDATE user_identities SET email = ?, last_used_at = ? WHERE issuer = ? AND subject = ?")
        .run(identity.email, now, identity.issuer, identity.subject);
      return user;
    }
    const user = this.findMember(identity.email);
    if (!user) throw new OidcError(`${identity.email} has no account here; ask an owner to invite you`, 403);
    const other = this.db
      .query<{ subject: string }, [string, string]>("SELECT subject FROM user_identities WHERE issuer = ? AND user_id = ? LIMIT 1")
      .get(identity.issuer, user.id);
    if (other) throw new OidcError("This account is linked to another identity at that provider", 403);
    this.db
      .query("INSERT INTO user_identities (issuer, subject, user_id, email, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(identity.issuer, identity.subject, user.id, identity.email, now, now);
    return user;
  }

  /** A user, by id, who belongs to at least one organisation (the by-id twin of findMember). */
  private memberById(userId: string): SignedInUser | null {
    return (
      this.db
        .query<SignedInUser, [string]>(
          "SELECT u.id, u.email FROM users u WHERE u.id = ? AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)",
        )
        .get(userId) ?? null
    );
  }
}
