import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "sdk-cli", access: "read-only" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

test("svc sdk install: --json is GET /sdk; the human form gives the version and the three install lines for the server in use", async () => {
  const info = await svcJson(box, ["sdk", "install"], { env });
  expect(info).toEqual(await (await fetch(`${ts.url}/sdk`)).json());
  const human = await svc(box, ["sdk", "install"], { env });
  expect(human.code).toBe(0);
  expect(human.stderr).toBe("");
  expect(human.stdout).toStartWith(`svc-sdk ${info.version} from ${ts.url}\n`);
  expect(human.stdout).toContain(`  npm install ${ts.url}/sdk/svc-sdk.tgz\n`);
  expect(human.stdout).toContain(`  import { createBrowserClient } from "${ts.url}/sdk/svc-browser.js";\n`);
  expect(human.stdout).toMatch(/^\/sdk\/svc\.js\s+[\d.]+ KB\s+[\d.]+ KB\s+"/m);
});

test("svc sdk is one noun: its keys subcommands and install, in its help; svc help lists it once", async () => {
  const help = await svc(box, ["sdk", "--help"], { env });
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("keys list");
  expect(help.stdout).toContain("install");
  const all = await svc(box, ["help"], { env });
  expect(all.stdout.split("\n").filter((line) => /^ {2}sdk\s/.test(line))).toHaveLength(1);
  const keys = await svcJson(box, ["sdk", "keys", "list"], { env });
  expect(Array.isArray(keys)).toBe(true);
});
