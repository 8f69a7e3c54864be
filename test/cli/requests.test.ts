import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ClientTestServer, type Sandbox, removeSandboxes, sandbox, startClientTestServer, svc, svcJson } from "./client-helpers";

// `svc requests` (issue 30): open from a file with an API token, approve as another person, apply; list, get,
// reject, withdraw; --json equal to the API; a token cannot approve.

setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let asToken: Record<string, string>;
let asBen: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "requests-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  await ts.addMember("ben@example.com", "editor");
  box = sandbox();
  asToken = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  asBen = { SERVICE_CLI_TOKEN: await ts.accessTokenFor("ben@example.com"), SERVICE_URL: ts.url };
  expect((await ts.api("/api/admin/killswitches", { body: { name: "cli-cr" } })).status).toBe(201);
  expect((await ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } } } })).status).toBe(200);
  writeFileSync(join(box.cwd, "changes.json"), JSON.stringify([{ kind: "killswitch.set", name: "cli-cr", env: "prod", value: true }]));
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[], env = asToken) => svc(box, ["requests", ...args], { env, cwd: box.cwd });
const json = (args: string[], env = asToken) => svcJson(box, ["requests", ...args], { env, cwd: box.cwd });

describe("svc requests", () => {
  test("open with a token, approve as a person, apply; list and get; --json is the API's answer", async () => {
    const opened = await json(["open", "--title", "Kill cli-cr", "--reason", "incident", "--file", "changes.json"]);
    expect(opened).toMatchObject({ state: "open", title: "Kill cli-cr", reason: "incident", approvalsRequired: 1, changes: [{ kind: "killswitch.set", fingerprint: "version 1" }] });
    expect(opened).toEqual((await ts.api(`/api/admin/requests/${opened.id}`)).body);

    const refused = await run(["approve", opened.id]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("Only people approve");

    const human = await run(["list"]);
    expect(human.stdout).toMatch(/^ID\s+STATE\s+APPROVALS\s+AUTHOR\s+TITLE/);
    expect(human.stdout).toContain("0/1");
    const shown = (await run(["get", opened.id])).stdout;
    expect(shown).toContain("cli-cr → on (prod)");
    // The diff, a line each: off published now, on proposed.
    expect(shown).toContain('published now: {"value":false}');
    expect(shown).toContain('proposed:      {"value":true}');

    expect(await json(["approve", opened.id], asBen)).toMatchObject({ state: "approved", approvals: [{ by: "ben@example.com" }] });
    expect(await json(["apply", opened.id])).toMatchObject({ state: "applied" });
    expect((await ts.api("/api/admin/killswitches/cli-cr")).body.envs.prod).toMatchObject({ value: true, version: 2 });
    expect((await json(["list", "--state", "applied"])).map((r: { id: string }) => r.id)).toEqual([opened.id]);
  });

  test("reject with a note, withdraw; usage mistakes are refused before anything is sent", async () => {
    const a = await json(["open", "--title", "to reject", "--file", "changes.json"]);
    expect(await json(["reject", a.id, "--note", "not now"], asBen)).toMatchObject({ state: "rejected", note: "not now" });
    const b = await json(["open", "--title", "to withdraw", "--file", "changes.json"]);
    expect(await json(["withdraw", b.id])).toMatchObject({ state: "withdrawn" });
    const noTitle = await run(["open", "--file", "changes.json"]);
    expect(noTitle.code).toBe(2);
    expect(noTitle.stderr).toContain("--title");
    expect((await run(["list", "--state", "bogus"])).code).toBe(2);
  });

  test("get shows the schedule holding an approved request", async () => {
    const change = { kind: "killswitch.set", name: "cli-cr", env: "prod", value: false };
    writeFileSync(join(box.cwd, "off.json"), JSON.stringify([change]));
    const r = await json(["open", "--title", "off later", "--file", "off.json"]);
    await json(["approve", r.id], asBen);
    const scheduled = await ts.api("/api/admin/schedules", { body: { change, runAt: new Date(Date.now() + 3_600_000).toISOString() } });
    expect(scheduled.status).toBe(201);
    expect((await run(["get", r.id])).stdout).toContain(`held by schedule: ${scheduled.body.id}`);
    expect(await json(["get", r.id])).toMatchObject({ state: "approved", heldBy: scheduled.body.id });
  });
});
