import { createHash, randomBytes } from "node:crypto";
import type { Mailer, SignInMail } from "../src/modules/identity/mail";
import type { TestServer } from "./helpers";

/** Collects the sign-in mails the server would send. */
export class MailCapture implements Mailer {
  readonly sent: SignInMail[] = [];
  async send(mail: SignInMail): Promise<void> {
    this.sent.push(mail);
  }
  lastTo(email: string): SignInMail | undefined {
    return this.sent.findLast((m) => m.to === email);
  }
}

/** A clock the test moves by hand to reach expiries. */
export function testClock(start = Date.now()) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

/**
 * A clock that runs with real time, plus what the test adds to reach expiries. A device-flow client polling at
 * the server's interval is then never early by this clock, however long an approval takes; freeze() stops it for
 * a test that wants an early poll (slow_down), resume() runs it on from where it stood.
 */
export function runningTestClock() {
  let offset = 0;
  let frozenAt: number | null = null;
  return {
    now: () => frozenAt ?? Date.now() + offset,
    advance(ms: number) {
      if (frozenAt === null) offset += ms;
      else frozenAt += ms;
    },
    freeze() {
      frozenAt ??= Date.now() + offset;
    },
    resume() {
      if (frozenAt === null) return;
      offset = frozenAt - Date.now();
      frozenAt = null;
    },
  };
}

export type PageResponse = { status: number; headers: Headers; text: string; body: any; location: string | null; setCookies: string[] };

/**
 * Plays a browser against the real server: keeps cookies, sends the
 * Origin a browser sends on its own pages, never follows redirects.
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly baseUrl: string,
    /** Origin header on POSTs; null sends none. */
    public origin: string | null = baseUrl,
  ) {}

  get csrf(): string {
    return this.cookies.get("svc_csrf") ?? "";
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.request("GET", path, undefined, headers);
  }

  /** A plain HTML form post (urlencoded). */
  async postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.request("POST", path, { type: "application/x-www-form-urlencoded", text: new URLSearchParams(fields).toString() }, headers);
  }

  async postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.request("POST", path, { type: "application/json", text: typeof body === "string" ? body : JSON.stringify(body) }, headers);
  }

  private async request(method: string, path: string, body: { type: string; text: string } | undefined, extra: Record<string, string>): Promise<PageResponse> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("; ");
    if (method !== "GET" && this.origin) headers.origin = this.origin;
    if (body) headers["content-type"] = body.type;
    Object.assign(headers, extra);
    const res = await fetch(path.startsWith("http") ? path : this.baseUrl + path, { method, headers, body: body?.text, redirect: "manual" });
    const setCookies = res.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(";").map((s) => s.trim());
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = decodeURIComponent(pair!.slice(eq + 1));
      if (attributes.some((a) => /^max-age=0$/i.test(a)) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, text, body: parsed, location: res.headers.get("location"), setCookies };
  }
}

/** The value of a form field in a page. */
export function fieldValue(html: string, name: string): string | null {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  return match ? match[1]!.replaceAll("&#38;", "&") : null;
}

/** Signs `email` in through the magic-link pages; returns the browser with its session cookie. */
export async function signInWithMagicLink(ts: TestServer, mails: MailCapture, email: string, browser = new Browser(ts.url)): Promise<Browser> {
  await browser.get("/signin");
  const before = mails.sent.length;
  const sent = await browser.postForm("/auth/magic-link", { email, csrf: browser.csrf });
  if (sent.status !== 200) throw new Error(`magic-link request failed: ${sent.status} ${sent.text}`);
  const mail = mails.sent.slice(before).find((m) => m.to === email);
  if (!mail) throw new Error(`no mail to ${email}`);
  const token = new URL(mail.url).searchParams.get("token")!;
  await browser.get(`/auth/magic?token=${token}`);
  const done = await browser.postForm("/auth/magic", { token, csrf: browser.csrf });
  if (done.status !== 303) throw new Error(`magic sign-in failed: ${done.status} ${done.text}`);
  return browser;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export type TokenPairBody = {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  project_id: string | null;
  user_email: string;
};

/** The whole device flow: code, browser approval with the signed-in `browser`, token. */
export async function deviceLogin(ts: TestServer, browser: Browser, projectId?: string): Promise<TokenPairBody> {
  const { verifier, challenge } = pkcePair();
  const code = await ts.api("/auth/device/code", { key: null, body: { code_challenge: challenge, code_challenge_method: "S256", client_name: "test" } });
  if (code.status !== 200) throw new Error(`device code failed: ${code.status} ${code.text}`);
  const fields: Record<string, string> = { user_code: code.body.user_code, action: "approve", csrf: browser.csrf };
  if (projectId) fields.project_id = projectId;
  const confirmed = await browser.postForm("/auth/device/confirm", fields);
  if (confirmed.status !== 200) throw new Error(`confirm failed: ${confirmed.status} ${confirmed.text}`);
  const token = await ts.api("/auth/device/token", { key: null, body: { device_code: code.body.device_code, code_verifier: verifier } });
  if (token.status !== 200) throw new Error(`token failed: ${token.status} ${token.text}`);
  return token.body;
}
