import { expect, test } from "bun:test";
import { newId, newUuid, randomBase62, sha256Hex } from "../../src/lib/ids";
import { filterByQuery } from "../../src/lib/http";

test("ids carry their type prefix and base62 bodies", () => {
  const ids = new Set(Array.from({ length: 1000 }, () => newId("ksw")));
  expect(ids.size).toBe(1000);
  for (const id of ids) expect(id).toMatch(/^ksw_[A-Za-z0-9]{20}$/);
  expect(randomBase62(64)).toMatch(/^[A-Za-z0-9]{64}$/);
  expect(newUuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test("sha256Hex matches a known vector", () => {
  expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("filterByQuery: case-insensitive substring, OR over the text fields, empty keeps all", () => {
  const rows = [
    { name: "Checkout", description: null },
    { name: "search", description: "Große Suche" },
    { name: "other", description: "nothing" },
  ];
  const texts = (r: (typeof rows)[number]) => [r.name, r.description];
  expect(filterByQuery(rows, undefined, texts)).toHaveLength(3);
  expect(filterByQuery(rows, "", texts)).toHaveLength(3);
  expect(filterByQuery(rows, "CHECK", texts).map((r) => r.name)).toEqual(["Checkout"]);
  expect(filterByQuery(rows, "GROSSE", texts)).toHaveLength(0);
  expect(filterByQuery(rows, "große", texts).map((r) => r.name)).toEqual(["search"]);
  expect(filterByQuery(rows, "ROSSE", texts)).toHaveLength(0);
  expect(filterByQuery(rows, "no", texts).map((r) => r.name)).toEqual(["other"]);
});
