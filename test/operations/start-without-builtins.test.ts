/**
 * No source file imports a costly Node built-in statically (issue 32, start-up). The compiled binary is one bundle
 * whose static imports of built-ins are all loaded before anything runs, whichever command starts and whether or not
 * the importing module is ever evaluated: node:crypto, node:dns/promises, node:net and node:zlib cost about 9 ms of
 * every `svc serve` start, while only sign-in, connectors, outgoing calls and a few CLI commands use them. They load
 * on first use instead (`nodeCrypto()` in src/lib/node-crypto.ts, `require` inside the function); type imports are free.
 */
import { COMPILE_FLAGS } from "../../scripts/build";
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { ROOT } from "../cli/process";

const LAZY = ["crypto", "dns", "dns/promises", "net", "zlib", "http", "https", "tls", "child_process", "worker_threads"];
const STATIC_IMPORT = new RegExp(`^\\s*import\\s+(?!type\\b)[^;]*?from\\s+["'](?:node:)?(${LAZY.join("|")})["']`, "m");

test("no file under src/ imports node:crypto, node:net, node:dns, node:zlib (or the like) statically", () => {
  const found: string[] = [];
  for (const path of new Glob("src/**/*.{ts,tsx}").scanSync(ROOT)) {
    const text = readFileSync(join(ROOT, path), "utf8");
    const match = STATIC_IMPORT.exec(text);
    if (match) found.push(`${path}: node:${match[1]}`);
  }
  expect(found).toEqual([]);
});

/**
 * Elysia bundles file-type (for `t.File()` checks), whose tokenizer imports node:fs/promises statically: another
 * 2-3 ms of every start. The build leaves it out (`--external=file-type`), which is safe only while no schema uses
 * `t.File`/`t.Files` (Elysia would then check uploads without it, and warn).
 */
test("the build leaves file-type out of the binary, and no schema under src/ needs it", () => {
  expect(COMPILE_FLAGS).toContain("--external=file-type");
  const files: string[] = [];
  for (const path of new Glob("src/**/*.{ts,tsx}").scanSync(ROOT)) if (/\bt\.Files?\(/.test(readFileSync(join(ROOT, path), "utf8"))) files.push(path);
  expect(files).toEqual([]);
});
