import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

/**
 * Code references (issue 30, "Stale flags and code references"): POST /api/admin/refs replaces one
 * repository's references in one audited transaction; GET lists a flag's; repos and their delete.
 * File names are untrusted text: refused when they carry control or invisible characters, stored
 * as sent otherwise (path-traversal-looking names included), never a 500.
 */

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

const SHA1 = "3f9c2a1e8b7d4c6f0a5e9d2b1c8f7e6a5d4c3b2a";
const SHA2 = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b";
const push = (body: unknown, key?: string) => ts.api("/api/admin/refs", { body, key });
const refsOf = async (flag: string) => {
  const res = await ts.api(`/api/admin/refs?flag=${encodeURIComponent(flag)}`);
  expect(res.status).toBe(200);
  return res.body;
};
const storedRows = async () => Number((await ts.store.one<{ n: number }>("SELECT COUNT(*) AS n FROM code_refs WHERE project_id = ?", ts.projectId))!.n);
const auditOf = async (action: string) => (await ts.api(`/api/admin/audit?action=${action}&limit=50`)).body.entries as any[];

describe("code references API", () => {
  test("push, list per flag (counts per repo, commit), repos; a second push replaces; delete forgets; every write audited", async () => {
    const first = await push({
      repo: "github.com/acme/shop",
      branch: "main",
      commit: SHA1,
      refs: [
        { flag: "checkout", file: "web/cart.tsx", line: 42, kind: "sdk" },
        { flag: "checkout", file: "api/pay.go", line: 118, kind: "sdk" },
        { flag: "checkout", file: "api/pay.go", line: 118, kind: "sdk" },
        { flag: "new-search", file: "config/flags.yml", line: 7, kind: "string" },
      ],
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ repo: "github.com/acme/shop", branch: "main", commit: SHA1, refs: 3, flags: 2, pushedAt: expect.any(String), pushedBy: expect.any(String) });
    expect((await push({ repo: "github.com/acme/admin", commit: "abc1234", refs: [{ flag: "checkout", file: "src/Admin.kt", line: 3, kind: "string" }] })).status).toBe(200);

    const checkout = await refsOf("checkout");
    expect(checkout).toMatchObject({ flag: "checkout", total: 3, truncated: false, reposPushed: 2 });
    expect(checkout.repos).toEqual([
      { repo: "github.com/acme/admin", commit: "abc1234", branch: null, pushedAt: expect.any(String), count: 1 },
      { repo: "github.com/acme/shop", commit: SHA1, branch: "main", pushedAt: expect.any(String), count: 2 },
    ]);
    expect(checkout.refs.map((r: any) => [r.repo, r.file, r.line, r.kind, r.commit])).toEqual([
      ["github.com/acme/admin", "src/Admin.kt", 3, "string", "abc1234"],
      ["github.com/acme/shop", "api/pay.go", 118, "sdk", SHA1],
      ["github.com/acme/shop", "web/cart.tsx", 42, "sdk", SHA1],
    ]);
    expect(await refsOf("unused")).toEqual({ flag: "unused", total: 0, truncated: false, reposPushed: 2, repos: [], refs: [] });

    // The same repository again: its references are replaced whole; the other repository's stay.
    const second = await push({ repo: "github.com/acme/shop", commit: SHA2, refs: [{ flag: "new-search", file: "web/search.ts", line: 9, kind: "sdk" }] });
    expect(second.status).toBe(200);
    expect((await refsOf("checkout")).refs.map((r: any) => r.repo)).toEqual(["github.com/acme/admin"]);
    expect((await refsOf("new-search")).refs).toEqual([{ flag: "new-search", repo: "github.com/acme/shop", branch: null, commit: SHA2, file: "web/search.ts", line: 9, kind: "sdk", pushedAt: second.body.pushedAt }]);
    const repos = await ts.api("/api/admin/refs/repos");
    expect(repos.body.map((r: any) => [r.repo, r.commit, r.refs, r.flags])).toEqual([
      ["github.com/acme/admin", "abc1234", 1, 1],
      ["github.com/acme/shop", SHA2, 1, 1],
    ]);

    // Without a flag: every reference of the project, with the flag named.
    const every = (await ts.api("/api/admin/refs")).body;
    expect(every).toMatchObject({ flag: null, total: 2, reposPushed: 2 });
    expect(every.refs.map((r: any) => [r.flag, r.repo, r.file])).toEqual([
      ["checkout", "github.com/acme/admin", "src/Admin.kt"],
      ["new-search", "github.com/acme/shop", "web/search.ts"],
    ]);

    // Slashes in the name travel encoded.
    const gone = await ts.api(`/api/admin/refs/repos/${encodeURIComponent("github.com/acme/admin")}`, { method: "DELETE" });
    expect(gone.status).toBe(204);
    expect((await refsOf("checkout")).total).toBe(0);
    expect((await ts.api("/api/admin/refs/repos")).body.map((r: any) => r.repo)).toEqual(["github.com/acme/shop"]);
    const again = await ts.api(`/api/admin/refs/repos/${encodeURIComponent("github.com/acme/admin")}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(expectErrorShape(again.body).code).toBe("NOT_FOUND");

    const pushes = await auditOf("refs.push");
    expect(pushes.map((e) => [e.subjectName, e.detail.commit, e.detail.refs])).toEqual([
      ["github.com/acme/shop", SHA2, 1],
      ["github.com/acme/admin", "abc1234", 1],
      ["github.com/acme/shop", SHA1, 3],
    ]);
    expect(pushes[0].detail.previousCommit).toBe(SHA1);
    expect((await auditOf("refs.delete")).map((e) => [e.subjectName, e.detail.commit])).toEqual([["github.com/acme/admin", "abc1234"]]);
  });

  test("safe to delete: stale and no reference in any pushed repository; nothing pushed means unknown (never safe)", async () => {
    const other = await ts.newProject("No refs yet");
    const { refs } = ts.server.ctx.services;
    expect(await refs.isSafeToDelete(other.projectId, "checkout", true)).toBe(false);
    expect(await refs.isSafeToDelete(ts.projectId, "checkout", true)).toBe(true);
    expect(await refs.isSafeToDelete(ts.projectId, "checkout", false)).toBe(false);
    expect(await refs.isSafeToDelete(ts.projectId, "new-search", true)).toBe(false);
    // Another project's references are not this one's.
    expect((await ts.api("/api/admin/refs?flag=new-search", { key: other.adminKey })).body).toMatchObject({ total: 0, reposPushed: 0 });
  });

  test("hostile input: refused with {error, code} and nothing changes, or stored as text; never a 500", async () => {
    const before = await storedRows();
    const base = { repo: "github.com/acme/shop", commit: SHA2 };
    const refused: [unknown, number, string][] = [
      [{ ...base, refs: [{ flag: "checkout", file: "a\u0000b.ts", line: 1, kind: "sdk" }] }, 400, "refs[0].file"],
      [{ ...base, refs: [{ flag: "checkout", file: "ok.ts", line: 1, kind: "sdk" }, { flag: "check\nout", file: "b.ts", line: 1, kind: "sdk" }] }, 400, "refs[1].flag"],
      [{ ...base, refs: [{ flag: "checkout", file: "evil\u202Egpj.ts", line: 1, kind: "sdk" }] }, 400, "refs[0].file"],
      [{ ...base, repo: "shop\u001b[31m", refs: [] }, 400, "repo"],
      [{ ...base, refs: [{ flag: "checkout", file: "a.ts", line: 0, kind: "sdk" }] }, 400, "line"],
      [{ ...base, refs: [{ flag: "checkout", file: "a.ts", line: 1, kind: "eval" }] }, 400, "kind"],
      [{ ...base, refs: [{ flag: "checkout", file: "a.ts", line: 1, kind: "sdk", text: "x" }] }, 400, "text"],
      [{ ...base, extra: 1, refs: [] }, 400, "extra"],
      [{ ...base, commit: "HEAD; rm -rf /", refs: [] }, 400, "commit"],
      [{ ...base, refs: [{ flag: "x".repeat(129), file: "a.ts", line: 1, kind: "sdk" }] }, 400, "flag"],
      [{ ...base, refs: Array.from({ length: 10_001 }, (_, i) => ({ flag: "f", file: "a", line: i + 1, kind: "sdk" })) }, 400, "refs"],
      [{ ...base, refs: "all" }, 400, "refs"],
    ];
    for (const [body, status, names] of refused) {
      const res = await push(body);
      expect({ status: res.status, names }).toEqual({ status, names });
      const err = expectErrorShape(res.body);
      expect(`${err.error} ${err.detail ?? ""}`).toContain(names);
    }
    // Over the 1 MiB body limit: 413 before any validation.
    const huge = await ts.api("/api/admin/refs", { rawBody: JSON.stringify({ ...base, refs: [{ flag: "f", file: "a".repeat(2 * 1024 * 1024), line: 1, kind: "sdk" }] }), headers: { "content-type": "application/json" } });
    expect(huge.status).toBe(413);
    expect(expectErrorShape(huge.body).error).toBe("Body too large");
    const notJson = await ts.api("/api/admin/refs", { rawBody: "{refs:", headers: { "content-type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect(await storedRows()).toBe(before);
    expect((await refsOf("new-search")).refs[0].commit).toBe(SHA2);

    // Path-traversal-looking names, HTML and quotes are only text: stored and answered as sent.
    const odd = ["../../etc/passwd", "<img src=x onerror=alert(1)>.ts", "C:\\Windows\\win.ini", "a b/ü 名前.py"];
    const res = await push({ repo: "../../other", commit: "deadbeef", refs: odd.map((file, i) => ({ flag: "odd", file, line: i + 1, kind: "string" })) });
    expect(res.status).toBe(200);
    expect((await refsOf("odd")).refs.map((r: any) => [r.repo, r.file])).toEqual(odd.map((f) => ["../../other", f]));
    expect((await ts.api(`/api/admin/refs/repos/${encodeURIComponent("../../other")}`, { method: "DELETE" })).status).toBe(204);

    // A flag too long: 400.
    expect((await ts.api(`/api/admin/refs?flag=${"x".repeat(200)}`)).status).toBe(400);
  });

  test("a read-only token may list but not push or delete", async () => {
    const minted = await ts.api("/api/admin/tokens", { body: { name: "ro", access: "read-only" } });
    expect(minted.status).toBe(201);
    const token = minted.body.token;
    expect((await ts.api("/api/admin/refs?flag=new-search", { key: token })).status).toBe(200);
    const refused = await push({ repo: "x", commit: "abc", refs: [] }, token);
    expect(refused.status).toBe(403);
    expect((await ts.api(`/api/admin/refs/repos/${encodeURIComponent("github.com/acme/shop")}`, { method: "DELETE", key: token })).status).toBe(403);
    expect((await ts.api("/api/admin/refs/repos")).body.map((r: any) => r.repo)).toEqual(["github.com/acme/shop"]);
  });
});
