import type { Server } from "bun";

/**
 * A local stand-in for the vendors connectors call (webhook receivers,
 * Slack, Linear, Google, GitHub, Claude, Cursor, Jules): it records every
 * request and answers with what the test's handler says (default 200 `{}`).
 * Point the service at it with SERVICE_*_API_URL = `${standin.url}/<vendor>`.
 */
export type Recorded = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: string;
  json(): any;
  /** What the stand-in answered. */
  status: number;
};

export type Answer = { status?: number; body?: unknown; headers?: Record<string, string> };
export type Handler = (req: Recorded) => Answer | Promise<Answer> | undefined;

export class VendorStandIn {
  readonly requests: Recorded[] = [];
  private handlers: { prefix: string; handler: Handler }[] = [];
  private server: Server<unknown>;

  constructor() {
    this.server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (request) => {
        const url = new URL(request.url);
        const body = await request.text();
        const headers: Record<string, string> = {};
        request.headers.forEach((v, k) => (headers[k] = v));
        const rec: Recorded = {
          method: request.method,
          path: url.pathname,
          query: url.searchParams,
          headers,
          body,
          json: () => JSON.parse(body),
          status: 200,
        };
        const match = this.handlers.find((h) => url.pathname.startsWith(h.prefix));
        const answer = (match ? await match.handler(rec) : undefined) ?? {};
        rec.status = answer.status ?? 200;
        this.requests.push(rec);
        const text = answer.body === undefined ? "{}" : typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
        return new Response(rec.status === 204 ? null : text, { status: rec.status, headers: { "content-type": "application/json", ...answer.headers } });
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** Answers requests whose path starts with `prefix` (the latest registration of a prefix wins). */
  on(prefix: string, handler: Handler): void {
    this.handlers = [{ prefix, handler }, ...this.handlers.filter((h) => h.prefix !== prefix)];
  }

  to(prefix: string): Recorded[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  clear(): void {
    this.requests.length = 0;
  }

  stop(): void {
    this.server.stop(true);
  }
}

/** Polls `check` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** Every SERVICE_*_API_URL pointed at the stand-in (one path prefix per vendor), plus fast retries for tests. */
export function standInEnv(base: string): Record<string, string> {
  return {
    SERVICE_SLACK_API_URL: `${base}/slack`,
    SERVICE_SLACK_AUTHORIZE_URL: `${base}/slack-authorize`,
    SERVICE_LINEAR_API_URL: `${base}/linear`,
    SERVICE_LINEAR_AUTHORIZE_URL: `${base}/linear-authorize`,
    SERVICE_GOOGLE_SHEETS_API_URL: `${base}/sheets`,
    SERVICE_GOOGLE_AUTHORIZE_URL: `${base}/google-authorize`,
    SERVICE_GOOGLE_TOKEN_URL: `${base}/google-token`,
    SERVICE_GITHUB_API_URL: `${base}/github`,
    SERVICE_CLAUDE_API_URL: `${base}/claude`,
    SERVICE_CURSOR_API_URL: `${base}/cursor`,
    SERVICE_JULES_API_URL: `${base}/jules`,
    SERVICE_SLACK_CLIENT_ID: "slack-client",
    SERVICE_SLACK_CLIENT_SECRET: "slack-secret",
    SERVICE_LINEAR_CLIENT_ID: "linear-client",
    SERVICE_LINEAR_CLIENT_SECRET: "linear-secret",
    SERVICE_GOOGLE_CLIENT_ID: "google-client",
    SERVICE_GOOGLE_CLIENT_SECRET: "google-secret",
    SERVICE_CONNECTOR_POLL_MS: "100",
    SERVICE_CONNECTOR_RETRY_BASE_MS: "100",
    SERVICE_CONNECTOR_RETRY_MAX_MS: "400",
    SERVICE_CONNECTOR_MAX_ATTEMPTS: "4",
    // The stand-in is on 127.0.0.1: a loopback target, refused unless the operator allows private targets.
    SERVICE_CONNECTOR_PRIVATE_TARGETS: "allow",
  };
}

/** Sets environment variables for the duration of a test file; answers the restore. */
export function withEnv(vars: Record<string, string>): () => void {
  const before = new Map(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of before) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
