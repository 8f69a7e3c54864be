import { expect, setSystemTime, test, afterEach } from "bun:test";
import { ExpiringCache } from "../../src/lib/expiring-cache";

afterEach(() => setSystemTime());

test("callers at once share one lookup; the answer is kept for ttlMs, then looked up again", async () => {
  let lookups = 0;
  const cache = new ExpiringCache(async (key: string) => `${key}:${++lookups}`, { ttlMs: 1000, max: 10 });
  setSystemTime(new Date("2026-11-24T10:00:00Z"));
  expect(await Promise.all([cache.get("a"), cache.get("a"), cache.get("a")])).toEqual(["a:1", "a:1", "a:1"]);
  setSystemTime(new Date("2026-11-24T10:00:00.999Z"));
  expect(await cache.get("a")).toBe("a:1");
  setSystemTime(new Date("2026-11-24T10:00:01Z"));
  expect(await cache.get("a")).toBe("a:2");
  cache.clear();
  expect(await cache.get("a")).toBe("a:3");
  expect(lookups).toBe(3);
});

test("a failed lookup is not kept: the next caller asks again", async () => {
  let calls = 0;
  const cache = new ExpiringCache(async (key: string) => {
    calls++;
    if (calls === 1) throw new Error("refused");
    return key;
  }, { ttlMs: 60_000, max: 10 });
  expect(cache.get("p")).rejects.toThrow("refused");
  await Bun.sleep(0);
  expect(await cache.get("p")).toBe("p");
  expect(calls).toBe(2);
});

test("at most `max` keys: a full cache starts over", async () => {
  const seen: string[] = [];
  const cache = new ExpiringCache(async (key: string) => {
    seen.push(key);
    return key;
  }, { ttlMs: 60_000, max: 2 });
  await cache.get("a");
  await cache.get("b");
  await cache.get("c"); // full: a and b are forgotten
  await cache.get("c");
  await cache.get("a");
  expect(seen).toEqual(["a", "b", "c", "a"]);
});
