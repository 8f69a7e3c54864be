/**
 * `svc help` and `svc version` load no command's module (issue 32, item 3): the nouns declare their help line and
 * first example in their manifests (CliNoun), and each command loads only when it runs or its own help is read.
 */
import { describe, expect, test } from "bun:test";
import { BUN, ROOT } from "./process";
import { COMMANDS } from "../../src/main";

/** The source files of svc (relative to the repository) and the packages a `svc <argv>` run loaded, as it ended. */
function loadedBy(argv: string[]): { stdout: string; files: string[]; packages: string[] } {
  const script = `const { main } = await import(${JSON.stringify(`${ROOT}/src/main.ts`)});
process.exitCode = await main(${JSON.stringify(argv)});
console.error(JSON.stringify(Object.keys(require.cache)));`;
  const run = Bun.spawnSync([BUN, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(run.exitCode).toBe(0);
  const keys = JSON.parse(run.stderr.toString().trim().split("\n").at(-1)!) as string[];
  return {
    stdout: run.stdout.toString(),
    files: keys.filter((k) => k.startsWith(`${ROOT}/src/`)).map((k) => k.slice(ROOT.length + 1)),
    packages: keys.filter((k) => k.includes("/node_modules/")).map((k) => k.replace(/^.*\/node_modules\/((?:@[^/]+\/)?[^/]+).*$/, "$1")),
  };
}

/** A module's server or client code (anything of src/modules but its manifest), the app, or a command's module. */
const heavy = (file: string) =>
  (file.startsWith("src/modules/") && !/^src\/modules\/([^/]+\/manifest|index)\.ts$/.test(file)) ||
  ["src/app.ts", "src/server.ts", "src/cli/serve.ts", "src/cli/server-commands.ts", "src/cli/login.ts", "src/cli/account.ts", "src/cli/restore.ts", "src/cli/store-command.ts", "src/cli/mcp-command.ts", "src/cli/client-command.ts"].includes(file);

describe("svc help and svc version load no command's module", () => {
  test("svc version loads its own command only: no server, no module code, no web framework", () => {
    const run = loadedBy(["version"]);
    expect(run.stdout).toMatch(/^svc \d+\.\d+\.\d+ \(bun \d+\.\d+\.\d+/);
    expect(run.files.filter(heavy)).toEqual([]);
    expect(run.files).toContain("src/cli/version-command.ts");
    expect(run.packages.filter((p) => ["elysia", "arktype", "zod", "@modelcontextprotocol/sdk", "preact"].includes(p))).toEqual([]);
  });

  test("svc help loads no command: its lines come from the nouns' declarations", () => {
    const run = loadedBy(["help"]);
    expect(run.stdout).toContain("Commands:");
    expect(run.files.filter(heavy)).toEqual([]);
    expect(run.files.filter((f) => f.startsWith("src/cli/") && f.endsWith("-command.ts"))).toEqual([]);
    expect(run.packages.filter((p) => ["elysia", "arktype", "zod", "@modelcontextprotocol/sdk", "preact"].includes(p))).toEqual([]);
  });

  test("every noun's declared summary and example are its command's own (so svc help says what the commands say)", async () => {
    expect(COMMANDS.length).toBeGreaterThan(30);
    for (const noun of COMMANDS) {
      const command = await noun.load();
      expect({ name: noun.name, summary: noun.summary, example: noun.example }).toEqual({ name: command.name, summary: command.summary, example: command.examples[0]! });
    }
  });
});
