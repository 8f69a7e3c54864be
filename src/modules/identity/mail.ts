import { connect as netConnect, type Socket } from "node:net";
import { hostname } from "node:os";
import { connect as tlsConnect } from "node:tls";
import { randomBase62 } from "../../lib/ids";

/** A sign-in link on its way to a person. */
export type SignInMail = { to: string; url: string; reason: "sign-in" | "invite"; organisationName?: string };

export interface Mailer {
  send(mail: SignInMail): Promise<void>;
}

/** Without SMTP the link goes to the server log (stderr), where the operator can pass it on. */
export class LogMailer implements Mailer {
  async send(mail: SignInMail): Promise<void> {
    process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "magic link", email: mail.to, url: mail.url, reason: mail.reason })}\n`);
  }
}

function compose(mail: SignInMail): { subject: string; text: string } {
  if (mail.reason === "invite") {
    return {
      subject: "You have been invited to svc",
      text: `You have been added to ${mail.organisationName ?? "an organisation"} on svc.\r\n\r\nSign in with this link (valid for 7 days, usable once):\r\n\r\n${mail.url}\r\n`,
    };
  }
  return {
    subject: "Your svc sign-in link",
    text: `Sign in to svc with this link (valid for 15 minutes, usable once):\r\n\r\n${mail.url}\r\n\r\nIf you did not ask for it, ignore this mail.\r\n`,
  };
}

const SMTP_TIMEOUT_MS = 15_000;

/** Reads SMTP replies (possibly multi-line: `250-...` then `250 ...`) from whichever socket is current. */
class SmtpReplies {
  private buffer = "";
  private lines: string[] = [];
  private waiter: ((reply: { code: number; text: string }) => void) | null = null;
  private failure: Error | null = null;
  private onFailure: ((err: Error) => void) | null = null;

  attach(socket: Socket): void {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      let i: number;
      while ((i = this.buffer.indexOf("\n")) !== -1) {
        this.lines.push(this.buffer.slice(0, i).replace(/\r$/, ""));
        this.buffer = this.buffer.slice(i + 1);
      }
      this.deliver();
    });
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new Error("SMTP server closed the connection")));
  }

  /** Stops reading from the current socket (before STARTTLS hands it to TLS). */
  detach(socket: Socket): void {
    socket.removeAllListeners("data");
    socket.removeAllListeners("error");
    socket.removeAllListeners("close");
  }

  next(): Promise<{ code: number; text: string }> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.onFailure = reject;
      this.deliver();
    });
  }

  private deliver(): void {
    if (!this.waiter) return;
    const end = this.lines.findIndex((l) => /^\d{3}(?: |$)/.test(l));
    if (end === -1) return;
    const reply = this.lines.splice(0, end + 1);
    const waiter = this.waiter;
    this.waiter = null;
    this.onFailure = null;
    waiter({ code: Number(reply[end]!.slice(0, 3)), text: reply.map((l) => l.slice(4)).join("\n") });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.onFailure?.(err);
    this.waiter = null;
    this.onFailure = null;
  }
}

/**
 * A small SMTP client (RFC 5321) for the few mails svc sends: EHLO,
 * STARTTLS when the server offers it on `smtp://`, AUTH PLAIN when the URL
 * carries credentials, one message, QUIT.
 */
export class SmtpMailer implements Mailer {
  private readonly url: URL;
  readonly from: string;

  constructor(smtpUrl: string, from?: string) {
    this.url = new URL(smtpUrl);
    this.from = from ?? `svc <no-reply@${this.url.hostname}>`;
  }

  async send(mail: SignInMail): Promise<void> {
    const { subject, text } = compose(mail);
    const envelopeFrom = /<([^>]+)>/.exec(this.from)?.[1] ?? this.from;
    const message = [
      `From: ${this.from}`,
      `To: <${mail.to}>`,
      `Subject: ${subject}`,
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <${randomBase62(24)}@${this.url.hostname}>`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: 8bit",
      "",
      text,
    ].join("\r\n");
    await this.deliver(envelopeFrom, mail.to, message);
  }

  private async deliver(from: string, to: string, message: string): Promise<void> {
    const secure = this.url.protocol === "smtps:";
    const host = this.url.hostname;
    const port = Number(this.url.port) || (secure ? 465 : 587);
    const replies = new SmtpReplies();
    let socket: Socket = secure ? tlsConnect({ host, port, servername: host }) : netConnect({ host, port });
    replies.attach(socket);
    const timer = setTimeout(() => socket.destroy(new Error(`SMTP timed out after ${SMTP_TIMEOUT_MS} ms`)), SMTP_TIMEOUT_MS);

    const command = async (line: string | null, expect: number[]) => {
      if (line !== null) socket.write(`${line}\r\n`);
      const reply = await replies.next();
      if (!expect.includes(reply.code)) {
        const shown = line?.startsWith("AUTH") ? "AUTH" : line;
        throw new Error(`SMTP ${shown ?? "greeting"} answered ${reply.code} ${reply.text}`);
      }
      return reply;
    };

    try {
      await command(null, [220]);
      const helo = `EHLO ${hostname() || "localhost"}`;
      let ehlo = await command(helo, [250]);
      if (!secure && /^STARTTLS$/im.test(ehlo.text)) {
        await command("STARTTLS", [220]);
        replies.detach(socket);
        socket = tlsConnect({ socket, servername: host });
        replies.attach(socket);
        ehlo = await command(helo, [250]);
      }
      if (this.url.username) {
        const user = decodeURIComponent(this.url.username);
        const pass = decodeURIComponent(this.url.password);
        await command(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString("base64")}`, [235]);
      }
      await command(`MAIL FROM:<${from}>`, [250]);
      await command(`RCPT TO:<${to}>`, [250, 251]);
      await command("DATA", [354]);
      // Dot-stuffing: a line that starts with "." gets a second one.
      await command(`${message.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..")}\r\n.`, [250]);
      await command("QUIT", [221]).catch(() => undefined);
    } finally {
      clearTimeout(timer);
      socket.end();
    }
  }
}
