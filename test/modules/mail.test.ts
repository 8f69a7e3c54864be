import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { join } from "node:path";
import { createSecureContext, createServer as createTlsServer, TLSSocket, type SecureContext } from "node:tls";
import {
  appendOutbox,
  compose,
  createMailer,
  describeMailDelivery,
  OutboxMailer,
  parseSmtpUrl,
  SmtpMailer,
  type SignInMail,
} from "../../src/modules/identity/mail";
import { signInOptionsFromEnv } from "../../src/modules/identity/options";
import { UsageError } from "../../src/lib/usage-error";

const LINK = "https://svc.example.com/auth/magic?token=Abc123Def456Ghi789Jkl012Mno345Pq";
const MAIL: SignInMail = { to: "owner@example.com", url: LINK, reason: "sign-in" };

let dir: string;
/** The stand-ins' certificate (SAN IP:127.0.0.1 and DNS:localhost) and a second, unrelated one (SAN DNS:mail.other.example only). */
let cert: { key: string; cert: string };
let otherCert: { key: string; cert: string };

function selfSigned(name: string, altNames: string): { key: string; cert: string } {
  const key = join(dir, `${name}.key`);
  const crt = join(dir, `${name}.crt`);
  const run = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=stand-in", "-addext", `subjectAltName=${altNames}`, "-days", "1", "-keyout", key, "-out", crt],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (run.exitCode !== 0) throw new Error(`openssl failed: ${run.stderr.toString()}`);
  return { key: readFileSync(key, "utf8"), cert: readFileSync(crt, "utf8") };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-mail-test-"));
  cert = selfSigned("standin", "IP:127.0.0.1,DNS:localhost");
  otherCert = selfSigned("other", "DNS:mail.other.example");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ---------------------------------------------------------------------------
// A stand-in SMTP server (RFC 5321, just enough), recording whether each
// command arrived over TLS.

type Command = { line: string; tls: boolean };
type Session = { commands: Command[]; data: string; dataOverTls: boolean | null; tlsErrors: number };
/**
 * - `starttls`: plain listener that offers STARTTLS and upgrades on it;
 * - `stripped`: plain listener whose EHLO does not offer STARTTLS and that refuses it
 *   (what a downgrade attacker in the middle makes a server look like);
 * - `plain`: plain listener without STARTTLS (a trusted relay);
 * - `implicit`: TLS from the first byte (smtps).
 */
type StandInMode = "starttls" | "stripped" | "plain" | "implicit";

class StandIn {
  readonly sessions: Session[] = [];
  private server!: NetServer;
  private readonly context: SecureContext;

  /** TCP connections accepted, whether or not they got as far as SMTP. */
  connections = 0;

  constructor(
    readonly mode: StandInMode,
    private readonly identity = cert,
  ) {
    this.context = createSecureContext({ key: identity.key, cert: identity.cert });
  }

  async start(): Promise<this> {
    const onConnection = (socket: Socket) => this.serve(socket, this.mode === "implicit");
    this.server = this.mode === "implicit" ? createTlsServer({ key: this.identity.key, cert: this.identity.cert }, onConnection) : createServer(onConnection);
    this.server.on("connection", () => this.connections++);
    this.server.on("tlsClientError", () => undefined);
    await new Promise<void>((done) => this.server.listen(0, "127.0.0.1", done));
    return this;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  get last(): Session {
    if (this.sessions.length === 0) throw new Error("no SMTP session reached the stand-in");
    return this.sessions.at(-1)!;
  }

  stop(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }

  private serve(first: Socket, startsSecure: boolean): void {
    const session: Session = { commands: [], data: "", dataOverTls: null, tlsErrors: 0 };
    this.sessions.push(session);
    let socket = first;
    let secure = startsSecure;
    let buffer = "";
    let inData = false;
    const offerStartTls = this.mode === "starttls";

    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("latin1");
      let i: number;
      while ((i = buffer.indexOf("\r\n")) !== -1) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        if (inData) {
          if (line === ".") {
            inData = false;
            socket.write("250 2.0.0 queued\r\n");
          } else {
            session.data += `${line.startsWith("..") ? line.slice(1) : line}\n`;
            session.dataOverTls = secure;
          }
          continue;
        }
        session.commands.push({ line, tls: secure });
        const verb = line.split(" ")[0]!.toUpperCase();
        if (verb === "EHLO") {
          socket.write(`250-stand-in\r\n${offerStartTls && !secure ? "250-STARTTLS\r\n" : ""}250-AUTH PLAIN\r\n250 8BITMIME\r\n`);
        } else if (verb === "STARTTLS" && offerStartTls && !secure) {
          socket.write("220 2.0.0 ready to start TLS\r\n");
          socket.removeListener("data", onData);
          buffer = "";
          const upgraded = new TLSSocket(socket, { isServer: true, secureContext: this.context });
          upgraded.on("error", () => session.tlsErrors++);
          upgraded.on("secure", () => {
            secure = true;
          });
          upgraded.on("data", onData);
          socket = upgraded;
        } else if (verb === "AUTH") socket.write("235 2.7.0 accepted\r\n");
        else if (verb === "MAIL" || verb === "RCPT") socket.write("250 2.1.0 ok\r\n");
        else if (verb === "DATA") {
          inData = true;
          socket.write("354 go ahead\r\n");
        } else if (verb === "QUIT") socket.end("221 bye\r\n");
        else socket.write("502 5.5.1 not here\r\n");
      }
    };
    first.on("data", onData);
    first.on("error", () => undefined);
    first.write("220 stand-in ESMTP\r\n");
  }
}

/** The command verbs a session received (nodemailer closes after the message without QUIT; ignore one if it comes). */
const verbs = (s: Session) => s.commands.map((c) => c.line.split(" ")[0]!.toUpperCase()).filter((v) => v !== "QUIT");

/** Headers and decoded body of a received message. */
function parseMessage(data: string): { headers: Record<string, string>; body: string } {
  const [head, ...rest] = data.split("\n\n");
  const headers: Record<string, string> = {};
  for (const line of head!.replace(/\n[ \t]+/g, " ").split("\n")) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = rest.join("\n\n");
  if (headers["content-transfer-encoding"] === "quoted-printable") {
    body = body.replace(/=\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
  return { headers, body };
}

function expectDelivered(session: Session, overTls: boolean) {
  const { headers, body } = parseMessage(session.data);
  expect(headers.to).toBe("owner@example.com");
  expect(headers.from).toBe("svc <svc@example.com>");
  expect(headers.subject).toBe("Your svc sign-in link");
  expect(body).toContain(LINK);
  expect(session.dataOverTls).toBe(overTls);
  expect(session.commands.map((c) => c.line)).toContain("MAIL FROM:<svc@example.com>");
  expect(session.commands.map((c) => c.line)).toContain("RCPT TO:<owner@example.com>");
  // Credentials from the URL, percent-decoded.
  const auth = session.commands.find((c) => c.line.startsWith("AUTH PLAIN "))!;
  expect(Buffer.from(auth.line.slice("AUTH PLAIN ".length), "base64").toString()).toBe("\0mailer\0p@ss:w/rd");
}

const CREDS = "mailer:p%40ss%3Aw%2Frd";

describe("SMTP through nodemailer", () => {
  const standIns: StandIn[] = [];
  const standIn = async (mode: StandInMode) => {
    const s = await new StandIn(mode).start();
    standIns.push(s);
    return s;
  };
  afterAll(() => Promise.all(standIns.map((s) => s.stop())));

  test("smtp:// upgrades with STARTTLS before AUTH, MAIL FROM and DATA", async () => {
    const s = await standIn("starttls");
    await new SmtpMailer(`smtp://${CREDS}@127.0.0.1:${s.port}`, "svc <svc@example.com>", cert.cert).send(MAIL);
    const session = s.last;
    // In clear: only the greeting's EHLO and STARTTLS itself.
    expect(session.commands.filter((c) => !c.tls).map((c) => c.line.split(" ")[0])).toEqual(["EHLO", "STARTTLS"]);
    expect(verbs(session)).toEqual(["EHLO", "STARTTLS", "EHLO", "AUTH", "MAIL", "RCPT", "DATA"]);
    for (const verb of ["AUTH", "MAIL", "RCPT", "DATA"]) expect(session.commands.find((c) => c.line.startsWith(verb))!.tls).toBe(true);
    expectDelivered(session, true);
  });

  test("smtp:// refuses a server that does not offer STARTTLS: no AUTH, no MAIL FROM, no DATA", async () => {
    const s = await standIn("stripped");
    const mailer = new SmtpMailer(`smtp://${CREDS}@127.0.0.1:${s.port}`, "svc <svc@example.com>", cert.cert);
    const error = await mailer.send(MAIL).then(
      () => null,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toContain("does not accept STARTTLS, which smtp:// requires");
    expect(error!.message).toContain("?tls=off");
    const session = s.last;
    expect(verbs(session)).not.toContain("AUTH");
    expect(verbs(session)).not.toContain("MAIL");
    expect(verbs(session)).not.toContain("RCPT");
    expect(verbs(session)).not.toContain("DATA");
    expect(session.data).toBe("");
    expect(session.commands.map((c) => c.line).join("\n")).not.toContain(Buffer.from("\0mailer\0p@ss:w/rd").toString("base64"));
  });

  test("smtp://…?tls=off delivers in plain text to a relay without STARTTLS", async () => {
    const s = await standIn("plain");
    await new SmtpMailer(`smtp://${CREDS}@127.0.0.1:${s.port}?tls=off`, "svc <svc@example.com>").send(MAIL);
    const session = s.last;
    expect(verbs(session)).toEqual(["EHLO", "AUTH", "MAIL", "RCPT", "DATA"]);
    expect(session.commands.every((c) => !c.tls)).toBe(true);
    expectDelivered(session, false);
  });

  test("smtp://…?tls=off does not use STARTTLS even when offered", async () => {
    const s = await standIn("starttls");
    await new SmtpMailer(`smtp://${CREDS}@127.0.0.1:${s.port}?tls=off`, "svc <svc@example.com>").send(MAIL);
    expect(verbs(s.last)).not.toContain("STARTTLS");
    expectDelivered(s.last, false);
  });

  test("a link longer than a mail line arrives intact (quoted-printable)", async () => {
    const s = await standIn("plain");
    const long = `https://flags.internal.example.com/auth/magic?token=${"Zz9".repeat(40)}`;
    await new SmtpMailer(`smtp://127.0.0.1:${s.port}?tls=off`, "svc <svc@example.com>").send({ ...MAIL, url: long });
    const { headers, body } = parseMessage(s.last.data);
    expect(headers["content-transfer-encoding"]).toBe("quoted-printable");
    expect(s.last.data.split("\n").every((line) => line.length <= 78)).toBe(true);
    expect(body).toContain(long);
  });

  test("smtps:// delivers over TLS from the first byte", async () => {
    const s = await standIn("implicit");
    await new SmtpMailer(`smtps://${CREDS}@127.0.0.1:${s.port}`, "svc <svc@example.com>", cert.cert).send(MAIL);
    const session = s.last;
    expect(session.commands.every((c) => c.tls)).toBe(true);
    expect(verbs(session)).toEqual(["EHLO", "AUTH", "MAIL", "RCPT", "DATA"]);
    expectDelivered(session, true);
  });

  test("a certificate that is not trusted is refused, on STARTTLS and on smtps://", async () => {
    // Trusting another certificate, or none (the system store does not know the stand-in's).
    for (const ca of [otherCert.cert, undefined]) {
      const starttls = await standIn("starttls");
      const error = await new SmtpMailer(`smtp://${CREDS}@127.0.0.1:${starttls.port}`, "svc <svc@example.com>", ca).send(MAIL).then(
        () => null,
        (e: Error) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toMatch(/certificate/i);
      // The handshake failed right after STARTTLS: nothing else was said.
      expect(verbs(starttls.last)).toEqual(["EHLO", "STARTTLS"]);
      expect(starttls.last.data).toBe("");

      const implicit = await standIn("implicit");
      const refused = await new SmtpMailer(`smtps://${CREDS}@127.0.0.1:${implicit.port}`, "svc <svc@example.com>", ca).send(MAIL).then(
        () => null,
        (e: Error) => e,
      );
      expect(refused).toBeInstanceOf(Error);
      expect(refused!.message).toMatch(/certificate/i);
      // It connected, but no TLS session (so no SMTP command) was ever established.
      expect(implicit.connections).toBe(1);
      expect(implicit.sessions).toEqual([]);
    }
  });

  test("a trusted certificate that does not name the host is refused", async () => {
    // Trusted (it is its own CA), but it names mail.other.example, not 127.0.0.1.
    const s = await new StandIn("starttls", otherCert).start();
    standIns.push(s);
    const error = await new SmtpMailer(`smtp://${CREDS}@127.0.0.1:${s.port}`, "svc <svc@example.com>", otherCert.cert).send(MAIL).then(
      () => null,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/127\.0\.0\.1|altnames|host/i);
    expect(verbs(s.last)).toEqual(["EHLO", "STARTTLS"]);
    expect(s.last.data).toBe("");
  });
});

describe("the outbox file", () => {
  const captured: string[] = [];
  const originals = {
    stderr: process.stderr.write,
    stdout: process.stdout.write,
    error: console.error,
    warn: console.warn,
    log: console.log,
    info: console.info,
  };

  beforeAll(() => {
    const capture =
      (original: (...args: any[]) => any) =>
      (...args: any[]) => {
        captured.push(args.map(String).join(" "));
        return original(...args);
      };
    process.stderr.write = capture(originals.stderr.bind(process.stderr)) as typeof process.stderr.write;
    process.stdout.write = capture(originals.stdout.bind(process.stdout)) as typeof process.stdout.write;
    console.error = capture(originals.error);
    console.warn = capture(originals.warn);
    console.log = capture(originals.log);
    console.info = capture(originals.info);
  });
  afterAll(() => {
    process.stderr.write = originals.stderr;
    process.stdout.write = originals.stdout;
    Object.assign(console, { error: originals.error, warn: originals.warn, log: originals.log, info: originals.info });
  });

  const lines = (path: string) =>
    readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l));

  test("is created 0600 with one exact JSON line per mail, and nothing goes to the log", async () => {
    const path = join(dir, "outbox-new.log");
    const mailer = new OutboxMailer(path);
    const before = Date.now();
    await mailer.send(MAIL);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await mailer.send({ to: "new@example.com", url: `${LINK}2`, reason: "invite", organisationName: "Acme" });
    const text = readFileSync(path, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const [first, second, ...more] = lines(path);
    expect(more).toEqual([]);
    expect(Object.keys(first)).toEqual(["ts", "to", "subject", "link"]);
    expect(first).toEqual({ ts: first.ts, to: "owner@example.com", subject: "Your svc sign-in link", link: LINK });
    expect(first.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(first.ts)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(first.ts)).toBeLessThanOrEqual(Date.now());
    expect(Object.keys(second)).toEqual(["ts", "to", "subject", "link"]);
    expect(second).toMatchObject({ to: "new@example.com", subject: "You have been invited to svc", link: `${LINK}2` });
    expect(captured.filter((c) => c.includes("token="))).toEqual([]);
    expect(captured.filter((c) => c.includes(LINK))).toEqual([]);
  });

  test("an existing file with wider permissions is narrowed to 0600 and appended to", async () => {
    const path = join(dir, "outbox-wide.log");
    writeFileSync(path, `${JSON.stringify({ ts: "2020-01-01T00:00:00.000Z", to: "old@example.com", subject: "old", link: "old" })}\n`);
    chmodSync(path, 0o644);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    await new OutboxMailer(path).send(MAIL);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(lines(path).map((l) => l.to)).toEqual(["old@example.com", "owner@example.com"]);
  });

  test("the setup link goes through appendOutbox; values cannot break the line", () => {
    const path = join(dir, "outbox-setup.log");
    appendOutbox(path, { to: "(first-run setup)", subject: "Set up\nsvc", link: "http://x/setup?token=t" }, new Date("2030-01-02T03:04:05.006Z"));
    expect(readFileSync(path, "utf8")).toBe('{"ts":"2030-01-02T03:04:05.006Z","to":"(first-run setup)","subject":"Set up\\nsvc","link":"http://x/setup?token=t"}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("a symbolic link in place of the file is refused", async () => {
    const target = join(dir, "elsewhere.txt");
    writeFileSync(target, "");
    const path = join(dir, "outbox-link.log");
    symlinkSync(target, path);
    await expect(new OutboxMailer(path).send(MAIL)).rejects.toThrow();
    expect(readFileSync(target, "utf8")).toBe("");
  });

  test("appends from several processes at once do not interleave", async () => {
    const path = join(dir, "outbox-concurrent.log");
    const modulePath = join(import.meta.dir, "../../src/modules/identity/mail.ts");
    const script = `
      const { appendOutbox } = await import(${JSON.stringify(modulePath)});
      const id = process.env.WRITER_ID;
      for (let i = 0; i < 300; i++) appendOutbox(${JSON.stringify(path)}, { to: id + "@example.com", subject: "s", link: "https://x/" + id + "/" + i + "/" + "x".repeat(4000) });
    `;
    const procs = ["a", "b", "c"].map((id) => Bun.spawn([process.execPath, "-e", script], { env: { ...process.env, WRITER_ID: id }, stdout: "ignore", stderr: "pipe" }));
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0]);
    const all = lines(path);
    expect(all.length).toBe(900);
    for (const id of ["a", "b", "c"]) {
      const mine = all.filter((l) => l.to === `${id}@example.com`).map((l) => Number(l.link.split("/")[4]));
      expect(mine).toEqual([...Array(300).keys()]);
    }
  });
});

describe("configuration", () => {
  test("signInOptionsFromEnv refuses bad tls values, unknown parameters and tls=off on smtps://", () => {
    const bad: [string, RegExp][] = [
      ["smtp://mail.example.com?tls=maybe", /tls=maybe is not allowed; the only value is tls=off/],
      ["smtp://mail.example.com?tls=", /tls= is not allowed/],
      ["smtp://mail.example.com?tls=OFF", /tls=OFF is not allowed/],
      ["smtp://mail.example.com?starttls=no", /unknown parameter "starttls"; the only parameter is tls=off/],
      ["smtp://mail.example.com?tls=off&debug=1", /unknown parameter "debug"/],
      ["smtp://mail.example.com?tls=off&tls=off", /more than once/],
      ["smtps://mail.example.com?tls=off", /tls=off contradicts smtps:\/\//],
      ["http://mail.example.com", /must start with smtp:\/\/ or smtps:\/\//],
      ["smtp://mail.example.com/path", /must not have a path/],
      ["smtp://user:%zz@mail.example.com", /percent-encoded/],
      ["not a url", /not a URL/],
    ];
    for (const [url, message] of bad) {
      let error: unknown;
      try {
        signInOptionsFromEnv({ SERVICE_SMTP_URL: url });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(message);
    }
    expect(signInOptionsFromEnv({ SERVICE_SMTP_URL: "smtp://mail.example.com?tls=off" }).smtpUrl).toBe("smtp://mail.example.com?tls=off");
    expect(signInOptionsFromEnv({ SERVICE_SMTP_URL: "smtps://u:p@mail.example.com" }).smtpUrl).toBe("smtps://u:p@mail.example.com");
  });

  test("parseSmtpUrl: default ports, percent-decoded credentials, no tls parameter left", () => {
    expect(parseSmtpUrl("smtp://mail.example.com")).toEqual({ security: "starttls", host: "mail.example.com", port: 587 });
    expect(parseSmtpUrl("smtps://mail.example.com/")).toEqual({ security: "implicit", host: "mail.example.com", port: 465 });
    expect(parseSmtpUrl("smtp://a%40b:p%25w%3A@10.0.0.5:2525?tls=off")).toEqual({ security: "off", host: "10.0.0.5", port: 2525, user: "a@b", pass: "p%w:" });
    expect(parseSmtpUrl("smtps://[::1]:1465")).toEqual({ security: "implicit", host: "::1", port: 1465 });
  });

  test("createMailer picks the outbox without SMTP, and describeMailDelivery says where mail goes without credentials", () => {
    expect(createMailer({ outboxPath: "/data/outbox.log" })).toBeInstanceOf(OutboxMailer);
    expect(createMailer({ smtpUrl: "smtp://mail.example.com", outboxPath: "/data/outbox.log" })).toBeInstanceOf(SmtpMailer);
    expect(describeMailDelivery({ outboxPath: "/data/outbox.log" })).toBe("mail goes to /data/outbox.log (no SERVICE_SMTP_URL set)");
    expect(describeMailDelivery({ smtpUrl: "smtp://u:secret@smtp.example.com", outboxPath: "x" })).toBe("mail is sent through smtp.example.com:587 (STARTTLS required)");
    expect(describeMailDelivery({ smtpUrl: "smtps://u:secret@smtp.example.com", outboxPath: "x" })).toBe("mail is sent through smtp.example.com:465 (TLS)");
    expect(describeMailDelivery({ smtpUrl: "smtp://u:secret@10.0.0.5:25?tls=off", outboxPath: "x" })).toBe("mail is sent through 10.0.0.5:25 (plain text, tls=off)");
    expect(describeMailDelivery({ smtpUrl: "smtps://[::1]:1465", outboxPath: "x" })).toBe("mail is sent through [::1]:1465 (TLS)");
  });

  test("compose: subjects and the link in every body", () => {
    for (const reason of ["sign-in", "invite", "setup"] as const) {
      const { subject, text } = compose({ to: "a@example.com", url: LINK, reason, organisationName: "Acme" });
      expect(subject.length).toBeGreaterThan(0);
      expect(text).toContain(LINK);
    }
    expect(compose({ to: "a@example.com", url: LINK, reason: "invite", organisationName: "Acme" }).text).toContain("Acme");
  });
});
