import { join } from "node:path";
import { tmpdir } from "node:os";
import { recordAudit } from "../../lib/audit";
import { badRequest } from "../../lib/errors";
import { newId, randomBase62, sha256Hex } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import type { Store, Tx } from "../../lib/store";
import { SharedRateLimiter } from "../../lib/rate-limit";
import { findMemberByEmail, insertSession, insertSignInLink, useSignInLink } from "./store";
import { OutboxMailer, createMailer, type Mailer, type SignInMail } from "./mail";
import { OidcClient } from "./oidc";
import { DEFAULT_RATE_LIMITS, type SignInOptions, type SignInRateLimits } from "./options";
import type { Role, SignedInUser } from "./types";

/** Where mail goes without SMTP when the server named no outbox (`<data>/outbox.log` in `svc serve`). */
export const FALLBACK_OUTBOX_PATH = join(tmpdir(), "svc-memory", "outbox.log");

export const MAGIC_LINK_TTL_MS = 15 * 60_000;
export const INVITE_LINK_TTL_MS = 7 * 24 * 3600_000;
export const SESSION_TTL_MS = 30 * 24 * 3600_000;
/** The first-run setup link; every start of a still-empty server prints a fresh one. */
export const SETUP_LINK_TTL_MS = 24 * 3600_000;

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

/**
 * What every sign-in flow shares (clock, limiter, mailer, single-use links,
 * sessions). IdentityService holds one, privately; the flows (links.ts, setup.ts,
 * oidc-signin.ts, members.ts) take it as their first argument.
 */
export class IdentityCore {
  readonly now: () => number;
  /** The sign-in limits, shared by every server on the store. */
  readonly limiter: SharedRateLimiter;
  readonly rateLimits: SignInRateLimits;
  readonly oidc: OidcClient | null;
  readonly options: SignInOptions;
  /** Where mail goes without SMTP (and where the first-run setup link is kept). */
  readonly outboxPath: string;
  private readonly mailer: Mailer;
  /** Where links go: SMTP (or a mailer the embedder gave), or without one the outbox file at `outboxPath`. */
  get mailDelivery(): { configured: true } | { configured: false; outbox: string } {
    return this.mailer instanceof OutboxMailer ? { configured: false, outbox: this.mailer.path } : { configured: true };
  }

  constructor(readonly ctx: ServiceContext) {
    const options = ctx.options.signIn ?? {};
    this.options = options;
    this.now = options.now ?? Date.now;
    this.limiter = new SharedRateLimiter(ctx.store, this.now);
    this.rateLimits = { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
    this.oidc = options.oidc ? new OidcClient(options.oidc, this.now) : null;
    this.outboxPath = ctx.options.outboxPath ?? FALLBACK_OUTBOX_PATH;
    this.mailer = options.mailer ?? createMailer({ ...options, outboxPath: this.outboxPath });
  }

  get store(): Store {
    return this.ctx.store;
  }

  iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  /** A user who belongs to at least one organisation: only they may sign in. */
  async findMember(email: string): Promise<SignedInUser | null> {
    return findMemberByEmail(this.store, email.trim());
  }

  async issueLink(tx: Tx, purpose: "magic" | "setup", email: string | null, redirect: string | undefined, ttlMs: number, now = this.now()): Promise<string> {
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
  async takeLink(tx: Tx, token: string, purpose: "magic" | "setup"): Promise<{ email: string | null; redirect: string | null; created_at: string }> {
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
  async createSession(tx: Tx, user: { id: string; email: string }, method: SignInMethod, facts: Record<string, string> = {}, organisationIds: readonly string[] = []): Promise<string> {
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
  dispatch(mail: SignInMail): void {
    this.mailer.send(mail).catch((err) => {
      this.ctx.log.error("sign-in mail failed", { email: mail.to, reason: mail.reason, error: String(err) });
    });
  }
}
