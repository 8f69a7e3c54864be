import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "ops-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["ops", ...args], { env });
const json = (args: string[]) => svcJson(box, ["ops", ...args], { env });
const stored = async (ref: string | number) => (await ts.api(`/api/admin/ops/${ref}`)).body;
const intake = (path: "bug" | "feature-request", body: unknown) => ts.api(`/ops/${path}`, { key: null, headers: { "x-sdk-key": ts.clientKey }, body });

async function usageMistakes(cases: [string[], RegExp][]): Promise<void> {
  for (const [args, message] of cases) {
    const r = await run([...args, "--json"]);
    expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
    const body = JSON.parse(r.stderr);
    expect(body.code).toBe("USAGE");
    expect([args.join(" "), body.error]).toEqual([args.join(" "), expect.stringMatching(message)]);
  }
}

describe("svc ops", () => {
  test("create: --json is the stored record; open at once; text flags and priority", async () => {
    const created = await json(["create", "--type", "bug", "Checkout fails on Safari", "--steps", "Open the cart\nPress Checkout", "--actual", "Nothing", "--expected", "Payment page", "--priority", "high"]);
    expect(created).toEqual(await stored(created.id));
    expect(created).toMatchObject({ number: 1, type: "bug", status: "open", priority: "high", title: "Checkout fails on Safari", stepsToReproduce: "Open the cart\nPress Checkout", actualResult: "Nothing", expectedResult: "Payment page", source: "admin" });
    const human = await run(["create", "--type", "feature_request", "CSV export"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Filed #2 CSV export (feature_request, medium, open).");
    // Filed with the token, audited as its actor.
    expect((await auditOf(ts.store, ts.projectId, 100)).filter((a) => a.action === "ops.create")).toHaveLength(2);
  });

  test("list: pending first; --status, --type and --query filter; --json is the API's answer", async () => {
    const filed = await intake("feature-request", { title: "Dark mode", useCase: "Night owls" });
    expect(filed.status).toBe(201);
    const all = await json(["list"]);
    expect(all).toEqual((await ts.api("/api/admin/ops")).body);
    expect(all[0]).toMatchObject({ number: 3, status: "pending_approval" });
    expect((await json(["list", "--status", "pending_approval"])).map((i: any) => i.number)).toEqual([3]);
    expect((await json(["list", "--type", "bug"])).map((i: any) => i.number)).toEqual([1]);
    expect((await json(["list", "--query", "night OWLS"])).map((i: any) => i.number)).toEqual([3]);
    const table = await run(["list"]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^#\s+TYPE\s+STATUS\s+PRIORITY\s+TITLE\s+FILED$/);
    expect(lines[1]).toMatch(/^3\s+feature_request\s+pending_approval\s+medium\s+Dark mode\s+\d{4}-/);
    expect((await run(["list", "--query", "nothing-like-it"])).stdout).toContain("No items match.");
  });

  test("get: by number, #number or id; human output shows the text fields", async () => {
    const byNumber = await json(["get", "1"]);
    expect(await json(["get", "#1"])).toEqual(byNumber);
    expect(await json(["get", byNumber.id])).toEqual(byNumber);
    const human = await run(["get", "1"]);
    expect(human.stdout).toContain("#1 Checkout fails on Safari");
    expect(human.stdout).toContain("  steps to reproduce:\n    Open the cart\n    Press Checkout");
    expect(human.stdout).toContain("  priority:  high");
    const missing = await run(["get", "999", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND" });
  });

  test("approve and reject: pending → open / rejected; refused moves exit 1 naming status", async () => {
    const approved = await json(["approve", "3"]);
    expect(approved).toMatchObject({ number: 3, status: "open" });
    const again = await run(["approve", "3", "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ code: "VALIDATION", detail: expect.stringMatching(/^status: /) });
    const pending = await intake("bug", { title: "Spam report" });
    const rejected = await run(["reject", String(pending.body.number)]);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toContain(`Rejected #${pending.body.number} Spam report: now rejected.`);
    expect((await stored(pending.body.number)).status).toBe("rejected");
    const approvals = await ts.store.all<{ type: string }>("SELECT type FROM outbox_events WHERE project_id = ? AND type = 'ticket.approved'", ts.projectId);
    expect(approvals).toHaveLength(1);
  });

  test("update: status along the transitions, priority, title; an empty text flag clears; a refused move exits 1", async () => {
    const moved = await json(["update", "1", "--status", "in_progress", "--priority", "low", "--title", "Checkout fails on Safari 18", "--actual", ""]);
    expect(moved).toMatchObject({ status: "in_progress", priority: "low", title: "Checkout fails on Safari 18", actualResult: null });
    expect(moved).toEqual(await stored(1));
    const human = await run(["update", "1", "--status", "done"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Updated #1:");
    expect(human.stdout).toContain("status:    done");
    const refused = await run(["update", "1", "--status", "in_progress", "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: "VALIDATION", detail: "status: from done an item goes to open" });
    expect((await json(["update", "2", "--use-case", "Finance wants it"])).useCase).toBe("Finance wants it");
  });

  test("usage mistakes are exit 2 naming the flag, and change nothing", async () => {
    const before = (await ts.api("/api/admin/ops")).body.length;
    await usageMistakes([
      [["create", "No type"], /--type bug\|feature_request is required/],
      [["create", "--type", "error", "Platform only"], /--type must be one of bug, feature_request/],
      [["create", "--type", "bug", "x", "--priority", "urgent"], /--priority must be one of high, medium, low, nice_to_have/],
      [["list", "--status", "closed"], /--status must be one of pending_approval, open, in_progress, done, rejected/],
      [["list", "--type", "task"], /--type must be one of bug, feature_request, error, alert/],
      [["update", "1"], /nothing to change/],
      [["update", "1", "--status", "finished"], /--status must be one of/],
    ]);
    expect((await ts.api("/api/admin/ops")).body.length).toBe(before);
  });

  test("help names the states and every subcommand", async () => {
    const help = await svc(box, ["help", "ops"], { env });
    expect(help.code).toBe(0);
    for (const sub of ["list", "get", "create", "update", "approve", "reject"]) expect(help.stdout).toContain(sub);
    expect(help.stdout).toContain("pending_approval → open (approve) or rejected");
    const top = await svc(box, ["help"], { env });
    expect(top.stdout).toMatch(/\n {2}ops\s+The queue of bug reports and feature requests/);
  });

  test("list_queue_items and get_queue_item answer what the API does, read-only", async () => {
    const { client, call, body: wrapped, close } = await mcpSession(box, env);
    // Queue items carry text from anonymous people: the tools hand it back marked as untrusted data (issue 25).
    const body = async (name: string, args: Record<string, unknown>) => {
      const answer = await wrapped(name, args);
      expect(answer).toMatchObject({ untrusted: true, notice: expect.stringContaining("UNTRUSTED DATA") });
      return answer.untrustedData;
    };
    try {
      const { tools } = await client.listTools();
      for (const name of ["list_queue_items", "get_queue_item"]) {
        expect(tools.find((t) => t.name === name)?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      }
      expect(await body("list_queue_items", {})).toEqual((await ts.api("/api/admin/ops")).body);
      expect((await body("list_queue_items", { status: "rejected" })).map((i: any) => i.title)).toEqual(["Spam report"]);
      expect((await body("list_queue_items", { type: "feature_request", q: "dark" })).map((i: any) => i.number)).toEqual([3]);
      expect(await body("get_queue_item", { item: "#1" })).toEqual(await stored(1));
      expect(await body("get_queue_item", { item: (await stored(2)).id })).toEqual(await stored(2));
      const missing = await call("get_queue_item", { item: "404" });
      expect(missing.isError).toBe(true);
      expect(missing.text).toContain("not found");
      expect((await call("list_queue_items", { status: "closed" })).isError).toBe(true);
    } finally {
      await close();
    }
  });
});
