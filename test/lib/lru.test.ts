import { expect, test } from "bun:test";
import { LruCache } from "../../src/lib/lru";

test("least recently used goes first; reads, re-sets, deletes and deleteWhere keep the order right", () => {
  const lru = new LruCache<string, number>(3);
  lru.set("a", 1);
  lru.set("b", 2);
  lru.set("c", 3);
  lru.get("a"); // order now b, c, a
  lru.set("b", 20); // c, a, b
  lru.set("d", 4); // evicts c
  expect([lru.get("a"), lru.get("b"), lru.get("c"), lru.get("d")]).toEqual([1, 20, undefined, 4]);
  expect(lru.delete("a")).toBe(true);
  expect(lru.delete("a")).toBe(false);
  lru.set("e", 5);
  lru.set("f", 6); // b, d, e, f over capacity: b goes
  expect(lru.get("b")).toBeUndefined();
  lru.deleteWhere((v) => v % 2 === 0); // drops d (4) and f (6)
  expect(lru.size).toBe(1);
  lru.set("g", 7);
  lru.set("h", 8);
  lru.set("i", 9); // e is oldest: evicted
  expect([lru.get("e"), lru.get("g"), lru.get("h"), lru.get("i")]).toEqual([undefined, 7, 8, 9]);
});

test("a flood of new keys at capacity keeps exactly the newest ones", () => {
  const lru = new LruCache<number, number>(1000);
  for (let i = 0; i < 50_000; i++) lru.set(i, i);
  expect(lru.size).toBe(1000);
  expect(lru.get(48_999)).toBeUndefined();
  expect(lru.get(49_000)).toBe(49_000);
  expect(lru.get(49_999)).toBe(49_999);
});
