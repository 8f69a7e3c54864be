// A type import and Bun.SQL at run time: a value import of "bun" makes the bundle load bun:sql at every start (about 4 ms of the binary's cold start), PostgreSQL or not.
import type { SQL } from "bun";
import { unavailable, validation } from "../errors";
import { type ActiveTx, type Announcement, BaseStore } from "./base";
import { RESYNC, type Param } from "./types";

/** The one NOTIFY channel; payloads are JSON `{o: origin, c: channel, p: payload}`. */
const NOTIFY_CHANNEL = "svc_changes";
/** Serialisation failure and deadlock: the transaction is retried. */
const RETRYABLE = new Set(["40001", "40P01"]);
const RETRY_BUDGET_MS = 2000;

/** `?`, `?1` placeholders to `$n`, once per SQL text. Our SQL never holds `?` inside string literals. */
const rewritten = new Map<string, string>();
export function toPostgresParams(sql: string): string {
  let out = rewritten.get(sql);
  if (out === undefined) {
    let next = 0;
    out = sql.replace(/\?(\d+)?/g, (_m, n: string | undefined) => `$${n ?? ++next}`);
    if (rewritten.size < 5000) rewritten.set(sql, out);
  }
  return out;
}

/** postgres://user:secret@host/db → postgres://user@host/db, for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

function pgCode(err: unknown): string | undefined {
  const e = err as { errno?: unknown; code?: unknown } | null;
  return typeof e?.errno === "string" ? e.errno : undefined;
}

/** The server is down or unreachable: the request is answered 503, not 500. */
export function isPostgresUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && (code.startsWith("ERR_POSTGRES_CONNECTION") || code === "ERR_POSTGRES_CONNECTION_CLOSED" || code === "ERR_POSTGRES_IDLE_TIMEOUT")) return true;
  const errno = pgCode(err);
  // 57P01 admin shutdown, 57P03 cannot connect now, 08xxx connection exceptions, 53300 too many connections.
  return errno !== undefined && (errno.startsWith("08") || errno === "57P01" || errno === "57P03" || errno === "53300");
}

type Runner = { unsafe: (sql: string, params?: unknown[]) => Promise<unknown[] & { count?: number }> };

/**
 * PostgreSQL text cannot hold U+0000 (SQLite can): such a value, from a path,
 * a query or a body, is the caller's mistake, answered 400 like any other.
 */
async function query(runner: Runner, sql: string, params: Param[]) {
  try {
    return await runner.unsafe(toPostgresParams(sql), params);
  } catch (err) {
    const code = pgCode(err);
    if (code === "22021" || code === "22P05") throw validation("Text must not contain NUL (U+0000) characters", "remove the \\u0000 characters");
    throw err;
  }
}
async function one<T>(runner: Runner, sql: string, params: Param[]): Promise<T | undefined> {
  return (await query(runner, sql, params))[0] as T | undefined;
}
async function all<T>(runner: Runner, sql: string, params: Param[]): Promise<T[]> {
  return [...(await query(runner, sql, params))] as T[];
}
async function run(runner: Runner, sql: string, params: Param[]): Promise<number> {
  return (await query(runner, sql, params)).count ?? 0;
}

/**
 * PostgreSQL 13+ through Bun.SQL (a pool of connections). A write is one
 * READ COMMITTED transaction; read-then-write paths take `tx.lock(scope)`
 * (an advisory transaction lock) before they read, so they are serialised
 * across every server, and serialisation failures and deadlocks are retried.
 * Announcements are NOTIFYs sent with the commit; every server LISTENs.
 */
export class PostgresStore extends BaseStore {
  readonly engine = "postgres" as const;
  readonly location: string;
  private readonly sql: SQL;
  private subscription: { unlisten(): Promise<void> } | undefined;
  private closed = false;

  constructor(url: string, options: { max?: number } = {}) {
    super();
    this.location = redactUrl(url);
    this.sql = new Bun.SQL({ url, max: options.max ?? 20, idleTimeout: 60, connectionTimeout: 10 });
  }

  /** Checks that the server answers and is PostgreSQL 13 or newer. */
  async connect(): Promise<void> {
    const row = await one<{ v: string }>(this.sql as unknown as Runner, "SELECT current_setting('server_version_num') AS v", []);
    const version = Number(row?.v ?? 0);
    if (version < 130000) throw new Error(`PostgreSQL ${Math.floor(version / 10000)} at ${this.location} is too old: svc needs PostgreSQL 13 or newer`);
  }

  /** The database's own identity (cluster and database oid): a restored dump or a copy has another one. */
  async identity(): Promise<string> {
    const row = await one<{ id: string }>(
      this.sql as unknown as Runner,
      "SELECT CAST((SELECT system_identifier FROM pg_control_system()) AS text) || ':' || CAST((SELECT oid FROM pg_database WHERE datname = current_database()) AS text) AS id",
      [],
    );
    return row!.id;
  }

  /** Starts hearing every server's announcements. */
  async start(): Promise<void> {
    let first = true;
    this.subscription = await this.sql.listen(
      NOTIFY_CHANNEL,
      (raw: string) => {
        try {
          const { o, c, p } = JSON.parse(raw) as { o: string; c: string; p: string };
          if (o !== this.origin) this.deliver(c, p);
        } catch (err) {
          this.onListenerError(err, NOTIFY_CHANNEL);
        }
      },
      () => {
        // Bun re-subscribes after a dropped connection; what was announced meanwhile is lost: reload.
        if (!first) this.deliverResync(RESYNC);
        first = false;
      },
    );
  }

  protected readOne<T>(sql: string, params: Param[]): Promise<T | undefined> {
    return one<T>(this.sql as unknown as Runner, sql, params);
  }
  protected readAll<T>(sql: string, params: Param[]): Promise<T[]> {
    return all<T>(this.sql as unknown as Runner, sql, params);
  }
  protected runOutside(sql: string, params: Param[]): Promise<number> {
    return run(this.sql as unknown as Runner, sql, params);
  }

  async exec(ddl: string): Promise<void> {
    const tx = this.scope.getStore() as (ActiveTx & { raw?: Runner }) | undefined;
    await (tx?.raw ?? (this.sql as unknown as Runner)).unsafe(ddl);
  }

  isUniqueViolation(err: unknown): boolean {
    return pgCode(err) === "23505";
  }

  protected async transaction<T>(fn: (tx: ActiveTx) => Promise<T>): Promise<T> {
    const deadline = performance.now() + RETRY_BUDGET_MS;
    let pause = 2;
    for (;;) {
      try {
        return await this.sql.begin(async (raw) => {
          const runner = raw as unknown as Runner;
          const announcements: Announcement[] = [];
          const origin = this.origin;
          const tx: ActiveTx & { raw: Runner } = {
            raw: runner,
            announcements,
            one: <R>(sql: string, ...params: Param[]) => one<R>(runner, sql, params),
            all: <R>(sql: string, ...params: Param[]) => all<R>(runner, sql, params),
            run: (sql: string, ...params: Param[]) => run(runner, sql, params),
            lock: async (scope: string) => {
              await runner.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [scope]);
            },
            announce: (channel, payload) => {
              announcements.push({ channel, payload });
            },
          };
          const result = await fn(tx);
          // NOTIFY is delivered on commit and never on rollback; one per announcement, in order.
          for (const a of announcements) {
            await runner.unsafe("SELECT pg_notify($1, $2)", [NOTIFY_CHANNEL, JSON.stringify({ o: origin, c: a.channel, p: a.payload })]);
          }
          return result;
        });
      } catch (err) {
        const code = pgCode(err);
        if (code === undefined || !RETRYABLE.has(code)) {
          if (isPostgresUnavailable(err)) throw unavailable(1);
          throw err;
        }
        if (performance.now() + pause > deadline) throw unavailable(1);
        await Bun.sleep(pause + Math.random() * pause);
        pause = Math.min(pause * 2, 50);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.subscription?.unlisten();
    } catch {
      // The connection is gone already.
    }
    await this.sql.close({ timeout: 5 });
  }
}
