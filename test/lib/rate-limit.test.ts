/**
 * The rate limiters every server shares (src/lib/rate-limit.ts), over two real Store instances on one SQLite file
 * (or one PostgreSQL database on the PostgreSQL run), as two servers hold them, with a clock the test moves.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ApiError } from "../../src/lib/errors";
import { SharedRateLimiter, SyncedRateLimiter } from "../../src/lib/rate-limit";
import { type Store, openStore, parseStoreTarget } from "../../src/lib/store";
import { storeMigrations } from "../../src/modules";
import { dropStore, freshStoreUrl, tempDir } from "../helpers";

const opened: Store[] = [];
const closers: (() => unknown)[] = [];
let database: string | undefined;

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const store of opened.splice(0)) await store.close();
  await dropStore(database);
  database = undefined;
});

/** Two stores on one new place to keep data, as two servers would open it. */
async function twoStores(): Promise<[Store, Store]> {
  const dir = tempDir("svc-rate-");
  database = await freshStoreUrl();
  const target = parseStoreTarget(database ?? `sqlite:${join(dir, "service.db")}`, dir);
  const a = await openStore(target, { migrations: storeMigrations() });
  opened.push(a);
  const b = await openStore(target, { migrations: storeMigrations() });
  opened.push(b);
  return [a, b];
}

function clock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** The status a limiter's call ends with: 200 when it let the call through, else the error's (429). */
async function statusOf(call: () => unknown): Promise<number> {
  try {
    await call();
    return 200;
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
}

async function until(condition: () => Promise<boolean>, timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await Bun.sleep(20);
  }
  return true;
}

describe("SharedRateLimiter", () => {
  test("the limit counts calls through both servers; a key over it is refused until its window ends, then counted afresh", async () => {
    const [a, b] = await twoStores();
    const time = clock();
    const onA = new SharedRateLimiter(a, time.now);
    const onB = new SharedRateLimiter(b, time.now);
    const rule = { limit: 3, windowMs: 60_000 };
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    expect(await statusOf(() => onB.take("k", rule))).toBe(200);
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    expect(await statusOf(() => onB.take("k", rule))).toBe(429);
    expect(await statusOf(() => onA.take("k", rule))).toBe(429);
    // Another key is counted apart.
    expect(await statusOf(() => onB.take("other", rule))).toBe(200);
    const refused = await onA.take("k", rule).catch((err: ApiError) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect(Number((refused as ApiError).headers?.["Retry-After"])).toBe(60);
    time.advance(60_000);
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    expect(await statusOf(() => onB.take("k", rule))).toBe(200);
  });
});

describe("SyncedRateLimiter", () => {
  test("each server counts its own calls; once their sum reaches the limit in the store, both refuse the key until its window ends", async () => {
    const [a, b] = await twoStores();
    const time = clock();
    const onA = new SyncedRateLimiter(a, time.now, 60_000);
    const onB = new SyncedRateLimiter(b, time.now, 60_000);
    closers.push(() => onA.close(), () => onB.close());
    const rule = { limit: 10, windowMs: 60_000 };
    // Each alone is under the limit: 3 through A, 8 through B.
    for (let i = 0; i < 3; i++) expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    for (let i = 0; i < 8; i++) expect(await statusOf(() => onB.take("k", rule))).toBe(200);
    await onA.sync();
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    // B's addition reaches 11 of 10: B refuses at once, and announces it.
    const heard: string[] = [];
    closers.push(a.listen("rate-limits:full", (payload) => heard.push(payload)));
    await onB.sync();
    expect(await statusOf(() => onB.take("k", rule))).toBe(429);
    // A, whose own count is 4 of 10, refuses once it has heard.
    expect(await until(async () => heard.length > 0)).toBe(true);
    expect(await statusOf(() => onA.take("k", rule))).toBe(429);
    // Another key is not affected.
    expect(await statusOf(() => onA.take("other", rule))).toBe(200);
    // Its window ended: counted afresh.
    time.advance(60_000);
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    expect(await statusOf(() => onB.take("k", rule))).toBe(200);
  });

  test("alone, a server's own count still refuses past the limit", async () => {
    const [a] = await twoStores();
    const onA = new SyncedRateLimiter(a, clock().now, 60_000);
    closers.push(() => onA.close());
    const rule = { limit: 2, windowMs: 60_000 };
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    expect(await statusOf(() => onA.take("k", rule))).toBe(200);
    expect(await statusOf(() => onA.take("k", rule))).toBe(429);
  });
});
