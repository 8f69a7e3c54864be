/**
 * The docs run as written (issue 27, items 3, 5 and 6): every shell block of README.md and docs/*.md,
 * in order per page, against a fresh server of that page's own (test/support/doc-blocks.ts says how),
 * and the generated parts of docs/ match what `npm run docs` writes.
 *
 * The blocks start their own server (the real CLI, on SQLite in a temporary data directory), so they
 * run once: on the SQLite pass of `npm test`. The PostgreSQL pass says so and skips them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { stalePages } from "../scripts/gen-docs";
import { DocSandbox, REPO, describeFailure, readPage, shellBlocks } from "./support/doc-blocks";
import { TEST_ENGINE } from "./helpers";

const PAGES = ["README.md", ...readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const ONCE = TEST_ENGINE === "sqlite";
if (!ONCE) console.log("docs.test.ts: the doc blocks ran on the SQLite pass (they start their own server); not again on PostgreSQL");

for (const page of PAGES) {
  const blocks = shellBlocks(page, readPage(page));
  if (blocks.length === 0) continue;
  describe.skipIf(!ONCE)(`${page} runs as written`, () => {
    let sandbox: DocSandbox | undefined;
    let failed: string | undefined;
    const runnable = blocks.some((b) => !b.skip);
    beforeAll(async () => {
      if (!runnable) return;
      sandbox = new DocSandbox(page);
      await sandbox.start();
    }, 60_000);
    afterAll(async () => {
      await sandbox?.stop();
    }, 30_000);
    for (const block of blocks) {
      if (block.skip) {
        test.skip(`${block.name}: skipped: ${block.skip}`, () => {});
        continue;
      }
      test(block.name, async () => {
        // A page's blocks build on each other: after one fails, the next says so instead of failing for a reason of its own.
        if (failed) throw new Error(`not run: ${failed} failed before it`);
        const result = await sandbox!.run(block.code);
        if (result.exitCode !== 0 || result.timedOut) {
          failed = block.name;
          throw new Error(describeFailure(block, result));
        }
      }, 90_000);
    }
  });
}

describe.skipIf(!ONCE)("the doc test itself", () => {
  test("a block marked skip carries its reason; fences other than sh, bash and shell are not run", () => {
    const blocks = shellBlocks(
      "x.md",
      ["# T", "<!-- doc-test: skip needs a person's inbox -->", "```sh", "mail ana", "```", "```json", "{}", "```", "```bash", "echo ok", "```"].join("\n"),
    );
    expect(blocks).toEqual([
      { name: "x.md:3 (T)", line: 3, code: "mail ana", skip: "needs a person's inbox" },
      { name: "x.md:9 (T)", line: 9, code: "echo ok", skip: undefined },
    ]);
  });

  test("a block that fails fails: a refused request, a failing command, a variable no block set", async () => {
    const sandbox = new DocSandbox("self-test");
    await sandbox.start();
    try {
      const ok = await sandbox.run('SVC=${SVC:-http://localhost:8080}\nX=1\ncurl -s "$SVC/healthz"');
      expect(ok).toMatchObject({ exitCode: 0, stdout: '{"ok":true}' });
      // What an earlier block set is there; the server answered on the test's own URL.
      expect(await sandbox.run('test "$X" = 1 && curl -s "$SVC/healthz"')).toMatchObject({ exitCode: 0 });
      // 401 without a key: curl fails the block (22), and the body is still shown.
      const refused = await sandbox.run('curl -s "$SVC/api/admin/projects/current"');
      expect(refused.exitCode).toBe(22);
      expect(refused.stdout).toContain("UNAUTHORIZED");
      expect((await sandbox.run("false\necho never")).exitCode).toBe(1);
      expect((await sandbox.run('echo "$UNSET_BY_ANY_BLOCK"')).exitCode).not.toBe(0);
      expect((await sandbox.run("sleep 5", 200)).timedOut).toBe(true);
    } finally {
      await sandbox.stop();
    }
  }, 60_000);
});

test("the generated parts of docs/ are what `npm run docs` writes (the CLI commands and the MCP tools)", async () => {
  const stale = await stalePages(false);
  expect(stale, `out of date: ${stale.join(", ")}: run \`npm run docs\` and commit`).toEqual([]);
});

test("the README stays a front door (at most 250 lines) with the two set-up commands, and links every page of docs/", () => {
  const readme = readPage("README.md");
  expect(readme.split("\n").length).toBeLessThanOrEqual(251);
  expect(readme).toContain("npm install && npm start");
  expect(readme).toContain("npm install && npm test");
  for (const page of PAGES.filter((p) => p !== "README.md")) expect(readme).toContain(`](${page})`);
});

