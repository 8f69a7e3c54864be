import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ClientTestServer, type Sandbox, removeSandboxes, sandbox, startClientTestServer, svc, svcJson } from "./client-helpers";

// `svc schedules`: create (one change with --at/--kind/--body, a ramp with --file), list, get, cancel against a
// real server; --json equal to the API; usage mistakes refused before anything is sent.

setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;
const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
const gateRules = (pct: number) => ({ kind: "gate.rules", name: "cli-ramp", env: "prod", rules: [{ conditions: [], passPercentage: pct }] });

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "schedules-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  expect((await ts.api("/api/admin/gates", { body: { name: "cli-ramp" } })).status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { body: { name: "cli-switch" } })).status).toBe(201);
  writeFileSync(join(box.cwd, "ramp.json"), JSON.stringify({ steps: [5, 25, 100].map((pct, i) => ({ change: gateRules(pct), runAt: inHours(i + 1) })) }));
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["schedules", ...args], { env, cwd: box.cwd });
const json = (args: string[]) => svcJson(box, ["schedules", ...args], { env, cwd: box.cwd });

describe("svc schedules", () => {
  test("create one change, a ramp from a file; list, get and cancel; --json is the API's answer", async () => {
    const one = await json(["create", "--at", "+2h", "--kind", "killswitch.set", "--body", '{"name":"cli-switch","env":"prod","value":true}']);
    expect(one).toMatchObject({ state: "pending", steps: [{ kind: "killswitch.set", target: { type: "killswitch", name: "cli-switch" }, state: "pending" }] });
    expect(one).toEqual((await ts.api(`/api/admin/schedules/${one.id}`)).body);
    const ramp = await json(["create", "--file", "ramp.json"]);
    expect(ramp.steps.map((s: { change: { rules: { passPercentage: number }[] } }) => s.change.rules[0]!.passPercentage)).toEqual([5, 25, 100]);

    const listed = await json(["list", "--state", "pending"]);
    expect(listed.map((s: { id: string }) => s.id)).toEqual([ramp.id, one.id]);
    const human = await run(["list"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ID\s+STATE\s+NEXT RUN\s+STEPS\s+SUMMARY/);
    expect(human.stdout).toContain(ramp.id);
    expect(human.stdout).toContain("0/3");
    const shown = await run(["get", ramp.id]);
    expect(shown.stdout).toContain("1. ");
    expect(shown.stdout).toContain("cli-ramp on prod: 1 rule: 25 %");

    const cancelled = await json(["cancel", ramp.id]);
    expect(cancelled.steps.map((s: { state: string }) => s.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
    const stored = await ts.store.all<{ state: string }>("SELECT state FROM schedule_steps WHERE schedule_id = ? ORDER BY step", ramp.id);
    expect(stored.map((r) => r.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect((await json(["list", "--state", "cancelled"])).map((s: { id: string }) => s.id)).toEqual([ramp.id]);
  });

  test("mistakes: usage before sending (exit 2), the server's refusal as its error", async () => {
    const before = (await ts.api("/api/admin/schedules")).body.length;
    for (const [args, message] of [
      [["create", "--kind", "gate.rules", "--body", "{}"], /--at is required/],
      [["create", "--at", "tomorrow", "--kind", "gate.rules"], /--at must be an ISO 8601 time/],
      [["create", "--at", "+1h"], /--kind is required/],
      [["create", "--file", "ramp.json", "--kind", "gate.rules"], /not with --kind/],
      [["create", "--file", "ramp.json", "--at", "+1h"], /--at goes with a single change/],
      [["list", "--state", "running"], /--state/],
    ] as [string[], RegExp][]) {
      const r = await run([...args, "--json"]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(JSON.parse(r.stderr).error).toMatch(message);
    }
    const refused = await run(["create", "--at", "+1h", "--kind", "gate.rules", "--body", '{"name":"cli-ramp","env":"prod","rules":[{"conditions":[],"passPercentage":150}]}', "--json"]);
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: "VALIDATION" });
    expect(JSON.parse(refused.stderr).detail).toContain("change.rules[0].passPercentage");
    expect((await ts.api("/api/admin/schedules")).body.length).toBe(before);
  });
});
