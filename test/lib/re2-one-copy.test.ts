/**
 * One RE2 in a process: the server's pattern checks (src/lib/re2.ts, loaded on first use) and the SDK's evaluator
 * (src/sdk/util.ts) use the same re2js, its ES module. A require("re2js") resolves to its CommonJS build, a second
 * copy beside the first (docs/operations.md, the pitfall of dual packages).
 */
import { expect, test } from "bun:test";

test("src/lib/re2.ts and the SDK's evaluator compile with one re2js, its ES module build", async () => {
  const script = `
    const { compileRegex } = await import("./src/lib/re2");
    const { re2Regex } = await import("./src/sdk/util");
    const results = [compileRegex("^a+$").test("aaa"), re2Regex("^(a|aa)+$").test("aaaa"), compileRegex("^b$").test("a")];
    const files = Object.keys(require.cache).filter((path) => path.includes("node_modules/re2js/")).map((path) => path.replace(/.*node_modules\\//, ""));
    console.log(JSON.stringify({ results, files }));
  `;
  const child = Bun.spawn([process.execPath, "--eval", script], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect(code, err).toBe(0);
  expect(JSON.parse(out.trim())).toEqual({ results: [true, true, false], files: ["re2js/build/index.js"] });
});
