import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { ENVS } from "../../src/lib/envs";
import { canonicalLocale, checkPushKeys } from "../../src/modules/i18n/service";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

const P = "/api/admin/i18n/profiles";
const K = "/api/admin/i18n/keys";
const createProfile = (body: unknown, key?: string) => ts.api(P, { body, key });
const getProfile = (ref: string, key?: string) => ts.api(`${P}/${encodeURIComponent(ref)}`, { key });
const patchProfile = (ref: string, body: unknown) => ts.api(`${P}/${encodeURIComponent(ref)}`, { method: "PATCH", body });
const removeProfile = (ref: string) => ts.api(`${P}/${encodeURIComponent(ref)}`, { method: "DELETE" });
const push = (profile_id: string, keys: { key: string; value: string }[], key?: string) => ts.api(K, { body: { profile_id, keys }, key });
const listKeys = (query = "") => ts.api(`${K}${query}`);
const patchKey = (k: string, body: unknown, query = "") => ts.api(`${K}/${encodeURIComponent(k)}${query}`, { method: "PATCH", body });
const removeKey = (k: string, query = "", body?: unknown) => ts.api(`${K}/${encodeURIComponent(k)}${query}`, { method: "DELETE", body });
const snapshot = async (env = "prod") => (await ts.api(`/api/sdk/v1/snapshot?env=${env}`, { key: ts.serverKey })).body;
const revisions = async (projectId = ts.projectId) => {
  const rows = await ts.store.all<{ env: string; revision: number }>("SELECT env, revision FROM env_revisions WHERE project_id = ?", projectId);
  return Object.fromEntries(ENVS.map((env) => [env, Number(rows.find((r) => r.env === env)?.revision ?? 0)]));
};
const audits = async (action: string, projectId = ts.projectId) => (await auditOf(ts.store, projectId, 1000)).filter((r) => r.action === action);
const keyCount = async (profileId: string) => Number((await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM i18n_keys WHERE profile_id = ?", profileId))?.n);
const kv = (pairs: Record<string, string>) => Object.entries(pairs).map(([key, value]) => ({ key, value }));

describe("locales and keys, as the service checks them", () => {
  test("canonicalLocale: BCP 47 tags in canonical form; non-tags are VALIDATION naming the field and saying why", () => {
    expect(canonicalLocale("en")).toBe("en");
    expect(canonicalLocale("de-ch")).toBe("de-CH");
    expect(canonicalLocale("ZH-hant-tw")).toBe("zh-Hant-TW");
    expect(canonicalLocale("sr-Latn-RS")).toBe("sr-Latn-RS");
    expect(canonicalLocale("es-419")).toBe("es-419");
    const refusal = (input: unknown) => {
      try {
        canonicalLocale(input);
      } catch (err) {
        return err as { code: string; detail: string };
      }
      throw new Error(`${JSON.stringify(input)} was accepted`);
    };
    expect(refusal("en_US")).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("separated by '-', not '_' (en-US)") });
    for (const bad of ["", "english please", "e", "en-", "-en", "x".repeat(36), "123", "en US", " en", "de-CH\n"]) {
      expect(refusal(bad).detail, JSON.stringify(bad)).toMatch(/^locale: /);
    }
  });

  test("checkPushKeys: the key pattern, value length and characters, 1,000 per call, and each key once; every problem named", () => {
    expect(checkPushKeys([])).toEqual([]);
    expect(checkPushKeys(kv({ "a.b:c_d-e": "x", A9: "" }))).toHaveLength(2);
    const refusal = (keys: unknown) => {
      try {
        checkPushKeys(keys);
      } catch (err) {
        return (err as { detail: string }).detail;
      }
      throw new Error("accepted");
    };
    expect(refusal(kv({ "bad key": "x" }))).toBe(`keys.0.key: "bad key" has U+0020 (expected 1 to 200 of A-Z a-z 0-9 _ . : - (e.g. checkout.button.pay))`);
    expect(refusal(kv({ "a/b": "x" }))).toContain("has '/'");
    expect(refusal(kv({ ["k".repeat(201)]: "x" }))).toContain("keys.0.key: 201 characters");
    expect(refusal([{ key: "", value: "x" }])).toContain("keys.0.key: is empty");
    expect(refusal(kv({ ok: "x".repeat(10_001) }))).toBe("keys.0.value: 10001 characters, at most 10,000");
    expect(refusal(kv({ ok: "a\u0000b" }))).toContain("keys.0.value: control characters");
    expect(refusal(kv({ ok: "\ud800" }))).toContain("unpaired UTF-16 surrogate");
    expect(checkPushKeys(kv({ ok: "line one\nline two\ttab\r\n" }))).toHaveLength(1);
    expect(refusal([{ key: "a", value: "1" }, { key: "b", value: "2" }, { key: "a", value: "3" }])).toBe(`keys.2.key: "a" is also keys.0 (send each key once per call)`);
    expect(refusal(Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, value: "v" })))).toContain("keys: 1,001 items, at most 1,000 per call");
    const many = refusal(Array.from({ length: 30 }, () => ({ key: "x y", value: 1 })));
    expect(many.split("; ")).toHaveLength(21);
    expect(many).toEndWith("; (and 40 more)");
  });
});

describe("profiles", () => {
  test("POST: 201 with the full record, locale canonical, audited, every env's revision moves, the locale appears in every snapshot", async () => {
    const before = await revisions();
    const created = await createProfile({ name: "web-de-ch", locale: "de-ch" });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(["createdAt", "id", "keyCount", "locale", "name", "updatedAt"]);
    expect(created.body).toMatchObject({ name: "web-de-ch", locale: "de-CH", keyCount: 0 });
    expect(created.body.id).toMatch(/^i18n_[A-Za-z0-9]{20}$/);
    expect(created.body.createdAt).toBe(created.body.updatedAt);
    expect((await getProfile(created.body.id)).body).toEqual(created.body);
    expect((await getProfile("web-de-ch")).body).toEqual(created.body);
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    for (const env of ENVS) expect((await snapshot(env)).translations).toEqual({ "de-CH": {} });
    const [row] = await audits("i18n_profile.create");
    expect(row).toMatchObject({ subjectId: created.body.id, subjectName: "web-de-ch", actorType: "key", detail: { locale: "de-CH" } });
  });

  test("409 ALREADY_EXISTS for a taken name, and for a locale another profile has (in any spelling); the same in another project is fine", async () => {
    const name = await createProfile({ name: "web-de-ch", locale: "fr" });
    expect(name.status).toBe(409);
    expect(expectErrorShape(name.body)).toMatchObject({ code: "ALREADY_EXISTS", detail: "name: choose another name" });
    const locale = await createProfile({ name: "swiss", locale: "DE-CH" });
    expect(locale.status).toBe(409);
    expect(locale.body).toMatchObject({ code: "ALREADY_EXISTS", detail: expect.stringMatching(/^locale: de-CH belongs to profile web-de-ch/) });
    const other = await ts.newProject("Other i18n");
    expect((await createProfile({ name: "web-de-ch", locale: "de-CH" }, other.adminKey)).status).toBe(201);
    // The other project's profile is not ours to see.
    const theirs = (await ts.api(P, { key: other.adminKey })).body[0].id;
    expect((await getProfile(theirs)).status).toBe(404);
    expect((await push(theirs, kv({ a: "b" }))).status).toBe(404);
  });

  test("bodies that do not fit: VALIDATION with a detail naming the field; nothing is created", async () => {
    const cases: [unknown, RegExp][] = [
      [{ name: "x", locale: "en_US" }, /^locale: subtags are separated by '-'/],
      [{ name: "x", locale: "klingon please" }, /^locale: expected a BCP 47 language tag/],
      [{ name: "x", locale: "x".repeat(36) }, /^locale: /],
      [{ name: "x" }, /^locale: is required/],
      [{ locale: "en" }, /^name: is required/],
      [{ name: "a/b", locale: "en" }, /^name: '\/' is not allowed/],
      [{ name: "i18n_fake", locale: "en" }, /^name: the i18n_ prefix is reserved/],
      [{ name: " padded", locale: "en" }, /^name: remove leading and trailing whitespace/],
      [{ name: "x", locale: "en", fallback: "de" }, /^fallback: is not a field of this body/],
      [{ name: 5, locale: "en" }, /^name: must be a string/],
    ];
    for (const [body, detail] of cases) {
      const r = await createProfile(body);
      expect([JSON.stringify(body), r.status, r.body.code]).toEqual([JSON.stringify(body), 400, "VALIDATION"]);
      expect(r.body.detail).toMatch(detail);
    }
    expect((await ts.api(P)).body.map((p: any) => p.name)).toEqual(["web-de-ch"]);
  });

  test("list: by name, q over name and locale (case-insensitive), with key counts; get by id or name, 404 otherwise", async () => {
    expect((await createProfile({ name: "english", locale: "en" })).status).toBe(201);
    expect((await createProfile({ name: "brazil", locale: "pt-br" })).status).toBe(201);
    expect((await push("english", kv({ "a.one": "One", "a.two": "Two" }))).status).toBe(200);
    const all = (await ts.api(P)).body;
    expect(all.map((p: any) => [p.name, p.locale, p.keyCount])).toEqual([
      ["brazil", "pt-BR", 0],
      ["english", "en", 2],
      ["web-de-ch", "de-CH", 0],
    ]);
    expect((await ts.api(`${P}?q=PT-`)).body.map((p: any) => p.name)).toEqual(["brazil"]);
    expect((await ts.api(`${P}?q=ENG`)).body.map((p: any) => p.name)).toEqual(["english"]);
    expect((await getProfile("english")).body).toMatchObject({ locale: "en", keyCount: 2 });
    const missing = await getProfile("nope");
    expect([missing.status, missing.body.code]).toEqual([404, "NOT_FOUND"]);
  });

  test("PATCH renames and moves the locale (its keys follow in the snapshot); 409s; audited with before and after; nothing sent changes nothing", async () => {
    const before = await revisions();
    const renamed = await patchProfile("brazil", { name: "portuguese" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "portuguese", locale: "pt-BR" });
    // A rename does not change what is published.
    expect(await revisions()).toEqual(before);
    expect((await push("portuguese", kv({ "a.one": "Um" }))).body.pushed_count).toBe(1);
    expect((await snapshot()).translations["pt-BR"]).toEqual({ "a.one": "Um" });
    const moved = await patchProfile("portuguese", { locale: "pt-pt" });
    expect(moved.body).toMatchObject({ locale: "pt-PT", keyCount: 1 });
    const snap = (await snapshot()).translations;
    expect(snap["pt-BR"]).toBeUndefined();
    expect(snap["pt-PT"]).toEqual({ "a.one": "Um" });
    const [audit] = await audits("i18n_profile.update");
    expect(audit!.detail).toEqual({ fields: ["locale"], before: { locale: "pt-BR" }, after: { locale: "pt-PT" } });

    expect((await patchProfile("portuguese", { name: "english" })).status).toBe(409);
    const taken = await patchProfile("portuguese", { locale: "EN" });
    expect([taken.status, taken.body.detail]).toEqual([409, expect.stringContaining("locale: en belongs to profile english")]);
    const count = (await audits("i18n_profile.update")).length;
    const same = await patchProfile("portuguese", { locale: "pt-PT", name: "portuguese" });
    expect(same.status).toBe(200);
    expect((await audits("i18n_profile.update")).length).toBe(count);
    expect((await patchProfile("portuguese", { locale: "pt_PT" })).body.detail).toMatch(/^locale: /);
    expect((await patchProfile("nope", { name: "x" })).status).toBe(404);
  });

  test("DELETE: 204, its keys go with it, audited with how many, its locale leaves the snapshot; 404 after", async () => {
    const profile = (await getProfile("portuguese")).body;
    expect((await push("portuguese", kv({ "a.two": "Dois", "a.three": "Três" }))).body.pushed_count).toBe(2);
    const before = await revisions();
    const r = await removeProfile("portuguese");
    expect(r.status).toBe(204);
    expect(await keyCount(profile.id)).toBe(0);
    expect((await snapshot()).translations["pt-PT"]).toBeUndefined();
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await audits("i18n_profile.delete"))[0]).toMatchObject({ subjectId: profile.id, subjectName: "portuguese", detail: { locale: "pt-PT", keys: 3 } });
    expect((await removeProfile("portuguese")).status).toBe(404);
    expect((await getProfile(profile.id)).status).toBe(404);
  });
});

describe("POST /api/admin/i18n/keys (SPEC: insert-only)", () => {
  test("adds what is new, leaves what exists untouched; {added, skipped, pushed_count, skipped_count} in the order sent; audited; published", async () => {
    const profile = (await createProfile({ name: "german", locale: "de" })).body;
    const first = await push(profile.id, kv({ "checkout.pay": "Bezahlen", "checkout.greeting": "Hallo {name}!" }));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ added: ["checkout.pay", "checkout.greeting"], skipped: [], pushed_count: 2, skipped_count: 0 });
    const before = await revisions();
    const second = await push("german", kv({ "checkout.total": "Summe", "checkout.pay": "CHANGED", "checkout.back": "Zurück" }));
    expect(second.body).toEqual({ added: ["checkout.total", "checkout.back"], skipped: ["checkout.pay"], pushed_count: 2, skipped_count: 1 });
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    // Untouched: the value and the timestamps.
    const stored = await ts.store.one<{ value: string; created_at: string; updated_at: string }>("SELECT value, created_at, updated_at FROM i18n_keys WHERE profile_id = ? AND key = ?", profile.id, "checkout.pay");
    expect(stored).toMatchObject({ value: "Bezahlen" });
    expect(stored!.created_at).toBe(stored!.updated_at);
    for (const env of ENVS) {
      expect((await snapshot(env)).translations.de).toEqual({ "checkout.back": "Zurück", "checkout.greeting": "Hallo {name}!", "checkout.pay": "Bezahlen", "checkout.total": "Summe" });
    }
    const rows = await audits("i18n_key.push");
    expect(rows[0]).toMatchObject({ subjectId: profile.id, subjectName: "german", detail: { locale: "de", added: 2, skipped: 1, keys: ["checkout.total", "checkout.back"] } });

    // Nothing new: nothing written, no audit row, no new revision.
    const count = (await audits("i18n_key.push")).length;
    const again = await push("german", kv({ "checkout.pay": "x", "checkout.total": "y" }));
    expect(again.body).toEqual({ added: [], skipped: ["checkout.pay", "checkout.total"], pushed_count: 0, skipped_count: 2 });
    expect(await revisions()).toEqual(after);
    expect((await audits("i18n_key.push")).length).toBe(count);
    // An empty push answers zeros for a profile that exists, 404 for one that does not.
    expect((await push("german", [])).body).toEqual({ added: [], skipped: [], pushed_count: 0, skipped_count: 0 });
    expect((await push("nope", [])).status).toBe(404);
  });

  test("a push that does not fit writes nothing: VALIDATION naming every failing item; 404 for an unknown profile", async () => {
    const before = await keyCount((await getProfile("german")).body.id);
    const mixed = await push("german", [
      { key: "fresh.one", value: "ok" },
      { key: "bad key", value: "x" },
      { key: "fresh.two", value: "x".repeat(10_001) },
      { key: "fresh.one", value: "again" },
    ]);
    expect(mixed.status).toBe(400);
    expect(expectErrorShape(mixed.body).code).toBe("VALIDATION");
    expect(mixed.body.detail.split("; ").map((d: string) => d.split(":")[0])).toEqual(["keys.1.key", "keys.2.value", "keys.3.key"]);
    expect(mixed.body.detail).toContain(`"fresh.one" is also keys.0`);
    expect(await keyCount((await getProfile("german")).body.id)).toBe(before);

    const tooMany = await push("german", Array.from({ length: 1001 }, (_, i) => ({ key: `bulk.${i}`, value: "v" })));
    expect([tooMany.status, tooMany.body.detail]).toEqual([400, expect.stringContaining("keys: 1,001 items, at most 1,000 per call")]);
    const unknown = await push("i18n_doesnotexist0000000", kv({ a: "b" }));
    expect([unknown.status, unknown.body.code, unknown.body.detail]).toEqual([404, "NOT_FOUND", "profile_id: no profile with this id or name in the project"]);
    for (const body of [{ keys: [] }, { profile_id: "german" }, { profile_id: "german", keys: [{ key: "a" }] }, { profile_id: "german", keys: [{ key: "a", value: "b", extra: 1 }] }, { profile_id: "german", keys: {} }]) {
      const r = await ts.api(K, { body });
      expect([JSON.stringify(body), r.status, r.body.code]).toEqual([JSON.stringify(body), 400, "VALIDATION"]);
    }
  });

  test("a profile holds at most 10,000 keys: the push that would pass it is refused whole", async () => {
    const big = (await createProfile({ name: "big", locale: "fi" })).body;
    for (let batch = 0; batch < 10; batch++) {
      const r = await push(big.id, Array.from({ length: 1000 }, (_, i) => ({ key: `k.${batch}.${i}`, value: "v" })));
      expect(r.body.pushed_count).toBe(1000);
    }
    const over = await push(big.id, kv({ "k.0.0": "old", "one.more": "v" }));
    expect([over.status, over.body.code]).toEqual([400, "VALIDATION"]);
    expect(over.body.detail).toContain("1 new keys over the 10,000 a profile may hold");
    expect(await keyCount(big.id)).toBe(10_000);
    // Keys it has are still skipped, not refused.
    expect((await push(big.id, kv({ "k.0.0": "old" }))).body).toMatchObject({ skipped_count: 1 });
    expect((await removeProfile(big.id)).status).toBe(204);
  });

  test("two identical pushes at once add each key exactly once; overlapping pushes split the keys between them", async () => {
    const profile = (await createProfile({ name: "race", locale: "it" })).body;
    const keys = Array.from({ length: 300 }, (_, i) => ({ key: `race.${i}`, value: `v${i}` }));
    const [a, b] = await Promise.all([push(profile.id, keys), push(profile.id, keys)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.pushed_count + b.body.pushed_count).toBe(300);
    expect(a.body.skipped_count + b.body.skipped_count).toBe(300);
    const addedA = new Set(a.body.added);
    expect(b.body.added.filter((k: string) => addedA.has(k))).toEqual([]);
    expect(await keyCount(profile.id)).toBe(300);

    // Six pushes of overlapping windows: every key is added by exactly one of them.
    const windows = Array.from({ length: 6 }, (_, w) => Array.from({ length: 200 }, (_, i) => ({ key: `lap.${w * 100 + i}`, value: `w${w}` })));
    const results = await Promise.all(windows.map((w) => push("race", w)));
    const added = results.flatMap((r) => r.body.added as string[]);
    expect(added.length).toBe(700);
    expect(new Set(added).size).toBe(700);
    expect(await keyCount(profile.id)).toBe(1000);
    const pushAudits = (await audits("i18n_key.push")).filter((r) => r.subjectId === profile.id);
    expect(pushAudits.reduce((sum, r) => sum + (r.detail as { added: number }).added, 0)).toBe(1000);
  });

  test("ten parallel creates of one locale: one 201, nine 409, one row", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => createProfile({ name: `nl-${i}`, locale: i % 2 ? "nl" : "NL" })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const row = await ts.store.one<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM i18n_profiles WHERE project_id = ? AND locale = ?", ts.projectId, "nl");
    expect(Number(row!.n)).toBe(1);
  });
});

describe("listing, changing and deleting keys", () => {
  test("GET: one profile's keys (by id or name), or every profile's with profile_id and locale; q over key and value; sorted by key", async () => {
    const german = (await getProfile("german")).body;
    const byName = await listKeys("?profile_id=german");
    expect(byName.status).toBe(200);
    expect(byName.body.map((k: any) => k.key)).toEqual(["checkout.back", "checkout.greeting", "checkout.pay", "checkout.total"]);
    expect(Object.keys(byName.body[0]).sort()).toEqual(["createdAt", "key", "locale", "profile_id", "updatedAt", "value"]);
    expect(byName.body[0]).toMatchObject({ profile_id: german.id, locale: "de", key: "checkout.back", value: "Zurück" });
    expect((await listKeys(`?profile_id=${german.id}`)).body).toEqual(byName.body);
    expect((await listKeys("?profile_id=german&q=SUMME")).body.map((k: any) => k.key)).toEqual(["checkout.total"]);
    expect((await listKeys("?profile_id=german&q=GREET")).body.map((k: any) => k.key)).toEqual(["checkout.greeting"]);
    expect((await listKeys("?profile_id=german&q=zurück")).body.map((k: any) => k.key)).toEqual(["checkout.back"]);
    const everywhere = (await listKeys("?q=a.one")).body;
    expect(everywhere.map((k: any) => [k.locale, k.key, k.value])).toEqual([["en", "a.one", "One"]]);
    const all = (await listKeys()).body;
    expect(all.length).toBe(2 + 4 + 1000);
    expect(new Set(all.map((k: any) => k.locale))).toEqual(new Set(["en", "de", "it"]));
    const missing = await listKeys("?profile_id=nope");
    expect([missing.status, missing.body.code]).toEqual([404, "NOT_FOUND"]);
    expect((await listKeys(`?q=${"a".repeat(101)}`)).status).toBe(400);
  });

  test("PATCH /keys/{key}: profile_id in the body or the query (once); the value replaced, audited, published; the same value writes nothing", async () => {
    const before = await revisions();
    const r = await patchKey("checkout.pay", { profile_id: "german", value: "Jetzt bezahlen" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ key: "checkout.pay", value: "Jetzt bezahlen", locale: "de" });
    expect(r.body.updatedAt > r.body.createdAt).toBe(true);
    expect((await snapshot("dev")).translations.de["checkout.pay"]).toBe("Jetzt bezahlen");
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await audits("i18n_key.update"))[0]).toMatchObject({ subjectName: "checkout.pay", detail: { profile: "german", locale: "de", key: "checkout.pay", before: "Bezahlen", after: "Jetzt bezahlen" } });

    const viaQuery = await patchKey("checkout.pay", { value: "Bezahlen!" }, "?profile_id=german");
    expect(viaQuery.body.value).toBe("Bezahlen!");
    const count = (await audits("i18n_key.update")).length;
    const afterQuery = await revisions();
    expect((await patchKey("checkout.pay", { profile_id: "german", value: "Bezahlen!" })).status).toBe(200);
    expect((await audits("i18n_key.update")).length).toBe(count);
    expect(await revisions()).toEqual(afterQuery);

    const both = await patchKey("checkout.pay", { profile_id: "german", value: "x" }, "?profile_id=english");
    expect([both.status, both.body.detail]).toEqual([400, "profile_id: send it once, in the body or in the query"]);
    const none = await patchKey("checkout.pay", { value: "x" });
    expect([none.status, none.body.detail]).toEqual([400, "profile_id: required (in the JSON body or as ?profile_id=)"]);
    const missingKey = await patchKey("checkout.nope", { profile_id: "german", value: "x" });
    expect([missingKey.status, missingKey.body.code]).toEqual([404, "NOT_FOUND"]);
    expect(missingKey.body.error).toBe("Key checkout.nope not found in profile german");
    expect((await patchKey("checkout.pay", { profile_id: "nope", value: "x" })).status).toBe(404);
    const badKey = await patchKey("bad key", { profile_id: "german", value: "x" });
    expect([badKey.status, badKey.body.detail]).toEqual([400, expect.stringMatching(/^key: "bad key" has U\+0020/)]);
    expect((await patchKey("checkout.pay", { profile_id: "german", value: "a\u0007b" })).body.detail).toMatch(/^value: control characters/);
    expect((await patchKey("checkout.pay", { profile_id: "german", value: "x".repeat(10_001) })).body.detail).toMatch(/^value: /);
    expect((await patchKey("checkout.pay", { profile_id: "german" })).body.detail).toBe("value: is required");
    expect((await patchKey("checkout.pay", { profile_id: "german", value: "x", key: "y" })).body.detail).toMatch(/^key: is not a field/);
    expect((await snapshot()).translations.de["checkout.pay"]).toBe("Bezahlen!");
  });

  test("DELETE /keys/{key}: ?profile_id= (or a JSON body); 204, audited, gone from the snapshot; 404 after", async () => {
    const before = await revisions();
    expect((await removeKey("checkout.back", "?profile_id=german")).status).toBe(204);
    expect((await snapshot()).translations.de["checkout.back"]).toBeUndefined();
    const after = await revisions();
    for (const env of ENVS) expect(after[env]).toBe(before[env]! + 1);
    expect((await audits("i18n_key.delete"))[0]).toMatchObject({ subjectName: "checkout.back", detail: { profile: "german", key: "checkout.back", value: "Zurück" } });
    expect((await removeKey("checkout.back", "?profile_id=german")).status).toBe(404);
    expect((await removeKey("checkout.total", "", { profile_id: "german" })).status).toBe(204);
    expect((await removeKey("checkout.greeting")).body.detail).toBe("profile_id: required (in the JSON body or as ?profile_id=)");
    expect((await listKeys("?profile_id=german")).body.map((k: any) => k.key)).toEqual(["checkout.greeting", "checkout.pay"]);
  });

  test("a read-only token reads profiles and keys but cannot write them", async () => {
    const token = await ts.api("/api/admin/tokens", { body: { name: "i18n-ro", access: "read-only" } });
    const secret = token.body.token as string;
    expect((await ts.api(P, { key: secret })).status).toBe(200);
    expect((await ts.api(`${K}?profile_id=german`, { key: secret })).status).toBe(200);
    expect((await createProfile({ name: "ro", locale: "sv" }, secret)).status).toBe(403);
    expect((await push("german", kv({ ro: "x" }), secret)).status).toBe(403);
    expect((await ts.api(`${K}/checkout.pay?profile_id=german`, { method: "DELETE", key: secret })).status).toBe(403);
  });
});

describe("the snapshot's translations", () => {
  test("every locale with its keys, the same on every env; keys like __proto__ are plain entries", async () => {
    expect((await push("english", kv({ __proto__x: "ok" }))).status).toBe(200);
    await ts.api(K, { rawBody: '{"profile_id":"english","keys":[{"key":"__proto__","value":"proto"},{"key":"constructor","value":"c"}]}' });
    // On PostgreSQL a server hears its own publish through LISTEN/NOTIFY: under load the prepared snapshot may lag a moment.
    let snaps = await Promise.all(ENVS.map((env) => snapshot(env)));
    for (let i = 0; i < 40 && !snaps.every((s) => Object.hasOwn(s.translations.en ?? {}, "constructor")); i++) {
      await Bun.sleep(50);
      snaps = await Promise.all(ENVS.map((env) => snapshot(env)));
    }
    for (const s of snaps) expect(s.translations).toEqual(snaps[0].translations);
    const en = snaps[0].translations.en;
    expect(Object.keys(en)).toEqual(["__proto__", "__proto__x", "a.one", "a.two", "constructor"]);
    expect(Object.getOwnPropertyDescriptor(en, "__proto__")?.value).toBe("proto");
    expect(Object.keys(snaps[0].translations)).toEqual(["de", "de-CH", "en", "it", "nl"]);
  });

  test("moduleTranslations off: the section is {} (from the next revision); on again: back", async () => {
    const project = await ts.api("/api/admin/projects/current", { method: "PATCH", body: { moduleTranslations: false } });
    expect(project.status).toBe(200);
    // A key write moves the revision (a project setting alone does not: see the report).
    expect((await push("english", kv({ "off.one": "1" }))).status).toBe(200);
    for (const env of ENVS) expect((await snapshot(env)).translations).toEqual({});
    expect((await ts.api("/api/admin/projects/current", { method: "PATCH", body: { moduleTranslations: true } })).status).toBe(200);
    expect((await push("english", kv({ "off.two": "2" }))).status).toBe(200);
    expect((await snapshot()).translations.en).toMatchObject({ "off.one": "1", "off.two": "2" });
  });
});
