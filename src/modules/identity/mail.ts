import { closeSync, constants, fchmodSync, fstatSync, openSync, writeSync } from "node:fs";
import type { Transporter } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { UsageError } from "../../lib/usage-error";

/** A link on its way to a person (sign-in, invitation, or the first-run setup link). */
export type SignInMail = { to: string; url: string; reason: "sign-in" | "invite" | "setup"; organisationName?: string };

export interface Mailer {
  send(mail: SignInMail): Promise<void>;
}

/** Subject and plain-text body of a mail. */
export function compose(mail: SignInMail): { subject: string; text: string } {
  if (mail.reason === "invite") {
    return {
      subject: "You have been invited to svc",
      text: `You have been added to ${mail.organisationName ?? "an organisation"} on svc.\r\n\r\nSign in with this link (valid for 7 days, usable once):\r\n\r\n${mail.url}\r\n`,
    };
  }
  if (mail.reason === "setup") {
    return {
      subject: "Set up your svc server",
      text: `Create the first account of this svc server with this link (valid for 24 hours, usable once):\r\n\r\n${mail.url}\r\n`,
    };
  }
  return {
    subject: "Your svc sign-in link",
    text: `Sign in to svc with this link (valid for 15 minutes, usable once):\r\n\r\n${mail.url}\r\n\r\nIf you did not ask for it, ignore this mail.\r\n`,
  };
}

// ---------------------------------------------------------------------------
// SERVICE_SMTP_URL

/**
 * How the connection to the SMTP server is protected:
 * - `implicit`: `smtps://`, TLS from the first byte (default port 465);
 * - `starttls`: `smtp://`, STARTTLS is required before anything else is sent
 *   (default port 587); a server that does not offer it is refused;
 * - `off`: `smtp://…?tls=off`, plain text, and STARTTLS is not used even
 *   when the server offers it.
 */
export type SmtpSecurity = "implicit" | "starttls" | "off";

export type SmtpTarget = { security: SmtpSecurity; host: string; port: number; user?: string; pass?: string };

const SMTP_URL_USAGE = "smtps://[user:pass@]host[:port] (TLS, port 465) or smtp://[user:pass@]host[:port] (STARTTLS required, port 587); add ?tls=off to smtp:// only for a plain-text relay on a trusted network";

/** Parses SERVICE_SMTP_URL; anything it does not understand is a UsageError that says what is allowed. */
export function parseSmtpUrl(value: string): SmtpTarget {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`SERVICE_SMTP_URL is not a URL; expected ${SMTP_URL_USAGE}`);
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new UsageError(`SERVICE_SMTP_URL must start with smtp:// or smtps://; expected ${SMTP_URL_USAGE}`);
  if (!url.hostname) throw new UsageError(`SERVICE_SMTP_URL has no host; expected ${SMTP_URL_USAGE}`);
  if ((url.pathname !== "" && url.pathname !== "/") || url.hash) throw new UsageError(`SERVICE_SMTP_URL must not have a path or #fragment; expected ${SMTP_URL_USAGE}`);

  let security: SmtpSecurity = url.protocol === "smtps:" ? "implicit" : "starttls";
  const keys = [...url.searchParams.keys()];
  for (const key of keys) {
    if (key !== "tls") throw new UsageError(`SERVICE_SMTP_URL: unknown parameter "${key}"; the only parameter is tls=off (on smtp:// only)`);
  }
  if (keys.length > 1) throw new UsageError("SERVICE_SMTP_URL: tls is given more than once; the only parameter is tls=off (on smtp:// only)");
  if (keys.length === 1) {
    const tls = url.searchParams.get("tls");
    if (tls !== "off") throw new UsageError(`SERVICE_SMTP_URL: tls=${tls} is not allowed; the only value is tls=off (plain text, on smtp:// only)`);
    if (url.protocol === "smtps:") throw new UsageError("SERVICE_SMTP_URL: tls=off contradicts smtps:// (TLS from the start); use smtp://…?tls=off for a plain-text relay");
    security = "off";
  }

  const target: SmtpTarget = {
    security,
    // A bracketed IPv6 literal becomes a plain address for the socket.
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : security === "implicit" ? 465 : 587,
  };
  if (url.username || url.password) {
    if (!url.username) throw new UsageError("SERVICE_SMTP_URL has a password but no user name");
    try {
      target.user = decodeURIComponent(url.username);
      target.pass = decodeURIComponent(url.password);
    } catch {
      throw new UsageError("SERVICE_SMTP_URL: the user name or password is not correctly percent-encoded (write % as %25)");
    }
  }
  return target;
}

const SECURITY_TEXT: Record<SmtpSecurity, string> = {
  implicit: "TLS",
  starttls: "STARTTLS required",
  off: "plain text, tls=off",
};

function hostPort(target: SmtpTarget): string {
  return `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
}

/**
 * Sends mail through an SMTP server with nodemailer, one connection per mail.
 * Certificates are always verified (`smtpCa` adds a trusted CA, for tests or a
 * private CA); credentials go out only after TLS unless the URL says tls=off.
 */
export class SmtpMailer implements Mailer {
  readonly target: SmtpTarget;
  readonly from: string;
  private readonly options: SMTPTransport.Options;
  /** Made on the first mail: nodemailer (and node:http, node:tls, ...) is loaded only when mail is sent, not at every start. */
  private transport?: Promise<Transporter<SMTPTransport.SentMessageInfo>>;

  constructor(smtpUrl: string, from?: string, smtpCa?: string) {
    this.target = parseSmtpUrl(smtpUrl);
    this.from = from ?? `svc <no-reply@${this.target.host}>`;
    const { security, host, port, user, pass } = this.target;
    const tls: NonNullable<SMTPTransport.Options["tls"]> = { rejectUnauthorized: true, minVersion: "TLSv1.2" };
    if (smtpCa) tls.ca = smtpCa;
    this.options = {
      host,
      port,
      secure: security === "implicit",
      requireTLS: security === "starttls",
      ignoreTLS: security === "off",
      auth: user !== undefined ? { user, pass } : undefined,
      tls,
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 30_000,
      // Nothing about the messages (they carry links) goes to any log.
      logger: false,
      debug: false,
      disableFileAccess: true,
      disableUrlAccess: true,
    };
  }

  private transporter(): Promise<Transporter<SMTPTransport.SentMessageInfo>> {
    this.transport ??= import("nodemailer").then((m) => m.default.createTransport(this.options));
    return this.transport;
  }

  async send(mail: SignInMail): Promise<void> {
    const { subject, text } = compose(mail);
    try {
      await (await this.transporter()).sendMail({ from: this.from, to: mail.to, subject, text });
    } catch (err) {
      const e = err as Error & { code?: string; command?: string; responseCode?: number };
      const where = `${hostPort(this.target)} (${SECURITY_TEXT[this.target.security]})`;
      if (this.target.security === "starttls" && e.command === "STARTTLS" && e.code === "ETLS" && e.message.includes("upgrading")) {
        throw new Error(
          `SMTP server ${hostPort(this.target)} does not accept STARTTLS, which smtp:// requires; nothing was sent. ` +
            "Use smtps:// if it speaks TLS from the start, or add ?tls=off to SERVICE_SMTP_URL for a plain-text relay on a trusted network",
          { cause: err },
        );
      }
      throw new Error(`SMTP delivery through ${where} failed: ${e.message}`, { cause: err });
    }
  }
}

// ---------------------------------------------------------------------------
// The outbox file (no SMTP configured)

/** One line of `<data>/outbox.log`. */
export type OutboxEntry = { to: string; subject: string; link: string };

/**
 * Appends one JSON line `{"ts","to","subject","link"}` to the outbox file,
 * creating it with mode 0600 (and narrowing an existing file with group or
 * other bits to 0600). The line goes out in a single O_APPEND write, so
 * concurrent appends do not interleave.
 */
export function appendOutbox(path: string, entry: OutboxEntry, now: Date = new Date()): void {
  const line = `${JSON.stringify({ ts: now.toISOString(), to: entry.to, subject: entry.subject, link: entry.link })}\n`;
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${path} is not a regular file`);
    if (stat.mode & 0o077) fchmodSync(fd, 0o600);
    const bytes = Buffer.from(line);
    let written = writeSync(fd, bytes);
    // A regular file takes the whole line at once; only a full disk stops short.
    while (written < bytes.length) written += writeSync(fd, bytes, written);
  } finally {
    closeSync(fd);
  }
}

/** Without SMTP, every mail is appended to `<data>/outbox.log`, where the operator can pass the link on. */
export class OutboxMailer implements Mailer {
  constructor(readonly path: string) {}

  async send(mail: SignInMail): Promise<void> {
    appendOutbox(this.path, { to: mail.to, subject: compose(mail).subject, link: mail.url });
  }
}

// ---------------------------------------------------------------------------

export type MailDeliveryOptions = { smtpUrl?: string; mailFrom?: string; smtpCa?: string; outboxPath: string };

/** SMTP when `smtpUrl` is set, otherwise the outbox file. */
export function createMailer(options: MailDeliveryOptions): Mailer {
  return options.smtpUrl ? new SmtpMailer(options.smtpUrl, options.mailFrom, options.smtpCa) : new OutboxMailer(options.outboxPath);
}

/** One line for the server to print at start: where mail goes (never credentials). */
export function describeMailDelivery(options: Pick<MailDeliveryOptions, "smtpUrl" | "outboxPath">): string {
  if (!options.smtpUrl) return `mail goes to ${options.outboxPath} (no SERVICE_SMTP_URL set)`;
  const target = parseSmtpUrl(options.smtpUrl);
  return `mail is sent through ${hostPort(target)} (${SECURITY_TEXT[target.security]})`;
}
