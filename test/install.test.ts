import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `npm install` stays quiet (issue 27, item 19): the Node version the project states is one every
 * locked dependency accepts (npm prints five EBADENGINE lines per package otherwise), and every
 * dependency with an install script has been reviewed in `allowScripts` (npm 11 lists the others).
 */
const repo = join(import.meta.dir, "..");
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8"));

/** The lowest Node the project states: its engines.node must be a plain `>=X.Y.Z`. */
function floor(range: string): string {
  const match = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range.trim());
  if (!match) throw new Error(`package.json engines.node should read ">=X.Y.Z", got ${JSON.stringify(range)}`);
  return match[1]!;
}

describe("install", () => {
  test("every locked package's engines.node accepts the project's stated Node floor", () => {
    const min = floor(pkg.engines.node);
    expect(lock.packages[""].engines).toEqual(pkg.engines);
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries<any>(lock.packages)) {
      const node = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      if (typeof node === "string" && !Bun.semver.satisfies(min, node)) refusing.push(`${path.replace(/^.*node_modules\//, "")} wants ${node}`);
    }
    expect(refusing).toEqual([]);
  });

  test("the Dockerfile and .nvmrc use a Node at or above the stated floor", () => {
    const major = Number(floor(pkg.engines.node).split(".")[0]);
    expect(Number(readFileSync(join(repo, ".nvmrc"), "utf8").trim())).toBeGreaterThanOrEqual(major);
    const from = /^FROM node:(\d+)/m.exec(readFileSync(join(repo, "Dockerfile"), "utf8"));
    expect(Number(from?.[1])).toBeGreaterThanOrEqual(major);
  });

  test("every locked package with an install script is approved or denied in allowScripts", () => {
    const reviewed = pkg.allowScripts ?? {};
    const unreviewed: string[] = [];
    for (const [path, entry] of Object.entries<any>(lock.packages)) {
      if (!path || !entry.hasInstallScript) continue;
      const name = entry.name ?? path.replace(/^.*node_modules\//, "");
      if (!(name in reviewed) && !(`${name}@${entry.version}` in reviewed)) unreviewed.push(`${name}@${entry.version}`);
    }
    expect(unreviewed).toEqual([]);
    // bun's postinstall only moves the platform binary into place (no network); vue-demi (in @scalar's
    // tree, whose prebuilt browser bundle is all svc embeds) switches Vue 2/3 shims nothing here loads.
    expect(reviewed).toEqual({ bun: true, "vue-demi": false });
    expect(existsSync(join(repo, "node_modules/.bin/bun"))).toBe(true);
  });
});
