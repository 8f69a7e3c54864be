import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { auditOf } from "../../src/lib/audit";
import { chunkIds, parseIdsText } from "../../src/modules/segments/ids-file";
import { removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Issue 29 (segments UI, item 2): `svc segments`, with id files sent in parts under the 1 MiB body limit.

// Each test spawns the CLI several times.
setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "segments-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["segments", ...args], { env });
const runJson = (args: string[]) => svcJson(box, ["segments", ...args], { env });
const segment = async (name: string) => (await ts.api(`/api/admin/segments/${encodeURIComponent(name)}`)).body;
const file = (name: string, text: string) => {
  const path = join(box.cwd, name);
  writeFileSync(path, text);
  return path;
};
/** 36-character ids, as UUIDs are: 100,000 of them are about 3.9 MB of JSON, four bodies or more. */
const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

describe("id files", () => {
  test("CSV first column or one id per line; a header equal to the attribute skipped; blanks and duplicates dropped", () => {
    expect(parseIdsText('\uFEFFuser_id,plan\r\nu-1,pro\r\n"u-2",free\r\n\r\nu-1,pro\n"u,3",x\n', "user_id")).toEqual(["u-1", "u-2", "u,3"]);
    expect(parseIdsText("a\nb\n\nc\n", "user_id")).toEqual(["a", "b", "c"]);
    // A first line that is not the attribute is an id.
    expect(parseIdsText("account_id\nacc-1\n", "user_id")).toEqual(["account_id", "acc-1"]);
    expect(parseIdsText("account_id\tname\nacc-1\tAcme\n", "account_id")).toEqual(["acc-1"]);
  });

  test("parts stay under the body limit and keep every id in order", () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => uuid(i));
    const chunks = chunkIds(ids);
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) expect(Buffer.byteLength(JSON.stringify({ addIds: c }))).toBeLessThan(1024 * 1024);
    expect(chunks.flat()).toEqual(ids);
    expect(chunkIds([])).toEqual([]);
  });
});

describe("svc segments", () => {
  test("create from a CSV, list, get: people see the count, --json the API's answer", async () => {
    const csv = file("beta.csv", "user_id,email\nu-1,a@x.com\nu-2,b@x.com\nu-3,c@x.com\nu-2,b@x.com\n");
    const human = await run(["create", "beta-testers", "--ids-file", csv, "--description", "Beta programme"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout).toMatch(/^Created segment beta-testers \(seg_\w+\): 3 ids\.$/m);
    expect(human.stdout).toContain('{"attr":"user_id","op":"in_segment","value":"beta-testers"}');
    expect(await segment("beta-testers")).toMatchObject({ ids: ["u-1", "u-2", "u-3"], idCount: 3, description: "Beta programme", attribute: "user_id" });

    const staff = await runJson(["create", "acme-staff", "--conditions", '[{"attr":"email","op":"ends_with","value":"@acme.com"}]']);
    expect(staff).toEqual({ id: expect.stringMatching(/^seg_/), name: "acme-staff", idCount: 0 });

    const listed = await runJson(["list"]);
    expect(listed).toEqual((await ts.api("/api/admin/segments")).body);
    expect(listed.map((s: any) => s.name)).toEqual(["acme-staff", "beta-testers"]);
    expect((await runJson(["list", "--query", "PROGRAMME"])).map((s: any) => s.name)).toEqual(["beta-testers"]);
    const tableText = (await run(["list"])).stdout;
    expect(tableText).toMatch(/^NAME\s+IDS\s+ATTRIBUTE\s+CONDITIONS\s+DESCRIPTION$/m);
    expect(tableText).toMatch(/^beta-testers\s+3\s+user_id\s+-\s+Beta programme$/m);
    expect(tableText).toMatch(/^acme-staff\s+0\s+user_id\s+email ends_with "@acme.com"\s+-$/m);
    expect((await run(["list", "--query", "nothing"])).stdout.trim()).toBe('No segments match "nothing".');

    expect(await runJson(["get", "beta-testers"])).toEqual(await segment("beta-testers"));
    const shown = await run(["get", "beta-testers"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("beta-testers (seg_");
    expect(shown.stdout).toContain("  ids:        3 ids on user_id");
    expect(shown.stdout).not.toContain("u-1");
  });

  test("100,000 UUIDs: create and replace are sent in parts under 1 MiB; add, remove; over the cap refused naming how many", async () => {
    const all = Array.from({ length: 100_000 }, (_, i) => uuid(i));
    const big = file("big.txt", `${all.join("\n")}\n`);
    const created = await run(["create", "everyone", "--ids-file", big]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/: 100,000 ids \(sent in \d+ requests\)\./);
    const stored = await segment("everyone");
    expect(stored.idCount).toBe(100_000);
    expect(stored.ids).toEqual(all);
    const updates = (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === "segment.update" && r.subjectName === "everyone");
    expect(updates.length).toBeGreaterThan(2);

    // Full: one more is refused by the server, naming how many the list would hold; nothing changes.
    const over = await run(["update", "everyone", "--add-ids-file", file("one.txt", "extra-1\n")]);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain("VALIDATION");
    expect(over.stderr).toContain("100001 ids");
    expect((await segment("everyone")).idCount).toBe(100_000);

    // Remove then add in one command.
    const swapped = await runJson(["update", "everyone", "--remove-ids-file", file("gone.csv", `user_id\n${uuid(0)}\n${uuid(1)}\n`), "--add-ids-file", file("new.csv", "user_id\nextra-1\n")]);
    expect(swapped.idCount).toBe(99_999);
    expect(swapped.ids.at(-1)).toBe("extra-1");
    expect(swapped.ids).not.toContain(uuid(0));

    // Replace by a list too big for one body: the difference is sent; the stored list is the file's.
    const next = [...all.slice(50_000), ...Array.from({ length: 40_000 }, (_, i) => `n-${i}`)];
    const replaced = await run(["update", "everyone", "--ids-file", file("next.txt", next.join("\n")), "--description", "Second import"]);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toMatch(/^Updated segment everyone \(sent in \d+ requests\):$/m);
    expect(replaced.stdout).toContain("  ids:        90,000 ids on user_id");
    const after = await segment("everyone");
    expect(after.description).toBe("Second import");
    expect(new Set(after.ids)).toEqual(new Set(next));
    expect(after.idCount).toBe(90_000);

    // A small replacement is one request.
    const small = await run(["update", "everyone", "--ids-file", file("small.txt", "a\nb\n")]);
    expect(small.stdout).toMatch(/^Updated segment everyone:$/m);
    expect((await segment("everyone")).ids).toEqual(["a", "b"]);
  });

  test("update fields, a header named by the segment's own attribute, rename; delete refused while used, then done", async () => {
    expect((await runJson(["create", "accounts", "--attribute", "account_id", "--ids-file", file("acc.csv", "account_id,name\nacc-1,Acme\n")])).idCount).toBe(1);
    const added = await runJson(["update", "accounts", "--add-ids-file", file("acc2.csv", "account_id,name\nacc-2,Beta\n")]);
    expect(added.ids).toEqual(["acc-1", "acc-2"]);
    const conds = await runJson(["update", "accounts", "--conditions", '[{"attr":"plan","op":"eq","value":"enterprise"}]', "--rename", "key-accounts"]);
    expect(conds).toMatchObject({ name: "key-accounts", conditions: [{ attr: "plan", op: "eq", value: "enterprise" }], ids: ["acc-1", "acc-2"] });

    expect((await ts.api("/api/admin/gates", { body: { name: "key-feature", rules: [{ conditions: [{ attr: "account_id", op: "in_segment", value: "key-accounts" }], passPercentage: 100 }] } })).status).toBe(201);
    const refused = await run(["delete", "key-accounts"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("key-feature");
    expect((await segment("key-accounts")).name).toBe("key-accounts");
    expect((await ts.api("/api/admin/gates/key-feature", { method: "DELETE" })).status).toBe(204);
    expect(await runJson(["delete", "key-accounts"])).toEqual({ name: "key-accounts", deleted: true });
    expect((await ts.api("/api/admin/segments/key-accounts")).status).toBe(404);
  });

  test("usage errors change nothing: both --ids-file and --add-ids-file, nothing to change, unreadable file, bad --conditions", async () => {
    const before = (await ts.api("/api/admin/segments")).body;
    const both = await run(["update", "beta-testers", "--ids-file", "x", "--add-ids-file", "y"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--ids-file replaces the whole list");
    const nothing = await run(["update", "beta-testers"]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("nothing to change");
    const missing = await run(["create", "ghost", "--ids-file", join(box.cwd, "no-such.csv")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--ids-file");
    expect(missing.stderr).toContain("ENOENT");
    const bad = await run(["create", "ghost", "--conditions", "{}"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--conditions must be a JSON list");
    const server = await run(["create", "ghost", "--conditions", '[{"attr":"x","op":"passes_gate","value":"g"}]', "--json"]);
    expect(server.code).toBe(1);
    expect(JSON.parse(server.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringContaining("conditions[0].op") });
    expect((await ts.api("/api/admin/segments")).body).toEqual(before);
  });
});
