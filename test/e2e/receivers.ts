/**
 * The far ends of the intake flow (test/e2e/intake-flow.test.ts), written the
 * way docs/api.md tells receivers to be written: a webhook receiver that
 * verifies `X-Svc-Signature` over the raw body and drops an Idempotency-Key it
 * has processed already, and a Linear stand-in (OAuth token endpoint and
 * GraphQL `issueCreate`) that does the same. Each records every raw attempt
 * (with the client port, to tell which server process sent it) apart from
 * what it processed, and can hold its answers so a server dies mid-delivery.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import type { Server } from "bun";

export type Attempt = {
  key: string;
  event: string;
  deliveryId: string;
  attempt: number;
  /** Webhook only: the signature verified (docs/api.md's verifySvcSignature). */
  signatureValid: boolean | null;
  body: string;
  /** Already processed: answered 200 and dropped. */
  duplicate: boolean;
  /** The TCP port of the sender's side of the connection. */
  clientPort: number;
  /** Which server process sent it (as the test named it), from the port; "?" once the connection is gone. */
  sender: string;
};

/** docs/api.md's receiver check, verbatim in substance. */
export function verifySvcSignature(secret: string, rawBody: string, header: string | null, toleranceS = 300): boolean {
  const parts = Object.fromEntries((header ?? "").split(",").map((p) => p.split("=", 2)));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceS || !parts.v1) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex"));
  const got = Buffer.from(parts.v1);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

type Held = { release: () => void };

abstract class Receiver {
  readonly attempts: Attempt[] = [];
  /** Idempotency-Key → the parsed body it was processed with (once). */
  readonly processed = new Map<string, any>();
  /** Names the process behind a client port (set by the test; default none). */
  identify: (clientPort: number) => string = () => "?";
  private holding = false;
  private held: Held[] = [];
  protected server: Server<unknown>;

  constructor() {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request, server) => {
        const clientPort = server.requestIP(request)?.port ?? 0;
        const sender = this.identify(clientPort);
        return this.handle(request, clientPort, sender);
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  get port(): number {
    return this.server.port!;
  }

  protected abstract handle(request: Request, clientPort: number, sender: string): Promise<Response>;

  /** From now on, a first (processed) attempt is answered only after `release()`. */
  hold(): void {
    this.holding = true;
  }

  /** Answers what is held (to a dead socket if its sender was killed) and stops holding. */
  release(): void {
    this.holding = false;
    for (const h of this.held.splice(0)) h.release();
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Waits for the answer to be let go when holding. */
  protected async maybeHold(): Promise<void> {
    if (!this.holding) return;
    await new Promise<void>((release) => this.held.push({ release }));
  }

  protected record(request: Request, extra: Pick<Attempt, "signatureValid" | "body" | "duplicate" | "clientPort" | "sender">): Attempt {
    const a: Attempt = {
      key: request.headers.get("idempotency-key") ?? "",
      event: request.headers.get("x-svc-event") ?? "",
      deliveryId: request.headers.get("x-svc-delivery") ?? "",
      attempt: Number(request.headers.get("x-svc-attempt")),
      ...extra,
    };
    this.attempts.push(a);
    return a;
  }

  stop(): void {
    this.release();
    this.server.stop(true);
  }
}

/** A webhook endpoint: verify, drop a seen key, process. */
export class WebhookReceiver extends Receiver {
  /** The connector's signing secret (`whsec_…`, shown once when it was created). */
  secret = "";

  protected async handle(request: Request, clientPort: number, sender: string): Promise<Response> {
    const raw = await request.text();
    const signatureValid = verifySvcSignature(this.secret, raw, request.headers.get("x-svc-signature"));
    const key = request.headers.get("idempotency-key") ?? "";
    if (!signatureValid) {
      this.record(request, { signatureValid, body: raw, duplicate: false, clientPort, sender });
      return Response.json({ error: "bad signature" }, { status: 401 });
    }
    const duplicate = key !== "" && this.processed.has(key);
    this.record(request, { signatureValid, body: raw, duplicate, clientPort, sender });
    if (duplicate) return Response.json({ ok: true, duplicate: true });
    this.processed.set(key, JSON.parse(raw));
    await this.maybeHold();
    return Response.json({ ok: true });
  }
}

export const LINEAR_CLIENT_ID = "linear-e2e-client";
export const LINEAR_CLIENT_SECRET = "linear-e2e-secret";
const LINEAR_TOKEN = "lin_oauth_e2e_token";

/** Linear's API origin as svc sees it: `/oauth/token` (code exchange, refresh) and `/graphql` (`issueCreate`). */
export class LinearStandIn extends Receiver {
  /** Issues filed: Idempotency-Key → the issue input. */
  get issues(): Map<string, any> {
    return this.processed;
  }
  tokenRequests = 0;

  protected async handle(request: Request, clientPort: number, sender: string): Promise<Response> {
    const path = new URL(request.url).pathname;
    const raw = await request.text();
    if (path === "/oauth/token") {
      this.tokenRequests++;
      const form = new URLSearchParams(raw);
      const ok =
        form.get("client_id") === LINEAR_CLIENT_ID &&
        form.get("client_secret") === LINEAR_CLIENT_SECRET &&
        ((form.get("grant_type") === "authorization_code" && form.get("code") === "e2e-code" && (form.get("code_verifier") ?? "").length >= 43) ||
          form.get("grant_type") === "refresh_token");
      if (!ok) return Response.json({ error: "invalid_grant" }, { status: 400 });
      return Response.json({ access_token: LINEAR_TOKEN, token_type: "Bearer", expires_in: 86_400, refresh_token: "lin_refresh_e2e", scope: "read write issues:create" });
    }
    if (path !== "/graphql" || request.method !== "POST") return Response.json({ errors: [{ message: `no route ${request.method} ${path}` }] }, { status: 404 });
    if (request.headers.get("authorization") !== `Bearer ${LINEAR_TOKEN}`) return Response.json({ errors: [{ message: "Authentication required" }] }, { status: 401 });
    const body = JSON.parse(raw);
    const input = body?.variables?.input;
    if (!String(body?.query).includes("issueCreate") || !input?.id || !input?.teamId || !input?.title) {
      return Response.json({ errors: [{ message: "bad issueCreate" }] }, { status: 400 });
    }
    const key = request.headers.get("idempotency-key") ?? "";
    const duplicate = key !== "" && this.processed.has(key);
    this.record(request, { signatureValid: null, body: raw, duplicate, clientPort, sender });
    const answer = (i: any, n: number) => ({ data: { issueCreate: { success: true, issue: { id: i.id, identifier: `ENG-${n}`, url: `https://linear.app/e2e/issue/ENG-${n}` } } } });
    if (duplicate) {
      const first = this.processed.get(key);
      return Response.json(answer(first, [...this.processed.keys()].indexOf(key) + 1));
    }
    this.processed.set(key, input);
    await this.maybeHold();
    return Response.json(answer(input, this.processed.size));
  }
}

/**
 * Which of `processes` owns the client end of a loopback TCP connection to
 * `serverPort` from `clientPort` (Linux: /proc/net/tcp{,6} gives the socket's
 * inode, /proc/<pid>/fd the owner). Undefined when the connection is gone.
 */
export function ownerOfConnection(clientPort: number, serverPort: number, processes: { name: string; pid: number }[]): string | undefined {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, "0");
  let inode: string | undefined;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      if (cols[1]!.endsWith(`:${hex(clientPort)}`) && cols[2]!.endsWith(`:${hex(serverPort)}`)) inode = cols[9];
    }
  }
  if (!inode || inode === "0") return undefined;
  const wanted = `socket:[${inode}]`;
  for (const p of processes) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${p.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${p.pid}/fd/${fd}`) === wanted) return p.name;
      } catch {}
    }
  }
  return undefined;
}
