import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { verify } from "../../src/modules/connectors/signing";
import { VendorStandIn, standInEnv, withEnv } from "../support/vendor-standin";
import { type ClientTestServer, type Sandbox, mcpSession, removeSandboxes, sandbox, startClientTestServer, svc, svcJson } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;
let vendor: VendorStandIn;
let restoreEnv: () => void;

beforeAll(async () => {
  vendor = new VendorStandIn();
  restoreEnv = withEnv(standInEnv(vendor.url));
  ts = await startClientTestServer();
  // Connector writes need the admin role (issue 25): an admin key, not a read-write token (see the last test).
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: ts.adminKey, SERVICE_URL: ts.url };
});
afterAll(async () => {
  await ts.stop();
  vendor.stop();
  restoreEnv();
  removeSandboxes();
});

const run = (args: string[]) => svc(box, ["connectors", ...args], { env });
const json = (args: string[]) => svcJson(box, ["connectors", ...args], { env });

describe("svc connectors", () => {
  let hookId: string;
  let secret: string;

  test("create a webhook: the secret printed once; list and get never show it", async () => {
    const created = await json(["create", "webhook", "--name", "intake", "--event", "bug.created", "--event", "alert.firing", "--set", `url=${vendor.url}/cli-hook`, "--json"]);
    expect(created).toMatchObject({ provider: "webhook", name: "intake", events: ["bug.created", "alert.firing"], enabled: true, credentialFields: ["signingSecret"] });
    expect(created.secret).toMatch(/^whsec_/);
    hookId = created.id;
    secret = created.secret;
    const list = await run(["list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("intake");
    expect(list.stdout).toContain(`${vendor.url}/cli-hook`);
    expect(list.stdout).not.toContain(secret);
    const get = await run(["get", hookId]);
    expect(get.stdout).toContain("signingSecret (stored encrypted, never shown)");
    expect(get.stdout).not.toContain(secret);
    expect(get.stdout).toContain("0 delivered, 0 pending, 0 failed");
  });

  test("create a trigger with a credential from a file; re-create keeps the id", async () => {
    const tokenFile = join(box.root, "token.txt");
    writeFileSync(tokenFile, "github_pat_from_file\n");
    const first = await json(["create", "github_trigger", "--set", "owner=acme", "--set", "repo=web", "--access-token", `@${tokenFile}`, "--json"]);
    const again = await json(["create", "github_trigger", "--set", "owner=acme", "--set", "repo=web", "--access-token", "github_pat_other", "--name", "CI", "--json"]);
    expect(again.id).toBe(first.id);
    expect(again.name).toBe("CI");
    const stored = await ts.store.one<{ credentials: string }>("SELECT credentials FROM connectors WHERE id = ?", first.id);
    expect(ts.server.ctx.services.connectors.box.openJson(stored!.credentials, first.id)).toEqual({ accessToken: "github_pat_other" });
    const human = await run(["create", "slack", "--name", "alerts", "--event", "alert.firing"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("not connected");
    expect(human.stdout).toContain("Connect it from the dashboard");
  });

  test("update, disable, enable; usage mistakes exit 2", async () => {
    const updated = await json(["update", hookId, "--event", "bug.created", "--name", "intake-2", "--json"]);
    expect(updated).toMatchObject({ name: "intake-2", events: ["bug.created"] });
    expect((await json(["disable", hookId, "--json"])).enabled).toBe(false);
    const on = await run(["enable", hookId]);
    expect(on.stdout.trim()).toBe("Connector intake-2 is enabled.");
    for (const args of [["create", "teams"], ["update", hookId], ["deliveries", hookId, "--status", "lost"], ["create", "webhook", "--set", "novalue"], ["create", "webhook", "--config", "[1]"]]) {
      const r = await run([...args, "--json"]);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(JSON.parse(r.stderr).code).toBe("USAGE");
    }
    const refused = await run(["create", "webhook", "--name", "x", "--event", "bug.made", "--set", "url=https://a.example"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("events[0]");
  });

  test("test fires a signed sample; deliveries shows it", async () => {
    vendor.on("/cli-hook", () => ({ status: 200 }));
    const fired = await run(["test", hookId]);
    expect(fired.code).toBe(0);
    expect(fired.stdout).toMatch(/^Delivered bug.created test \(dlv_\w+\): HTTP 200 in \d+ ms\.$/m);
    const sent = vendor.to("/cli-hook").at(-1)!;
    expect(verify(secret, sent.body, sent.headers["x-svc-signature"]!)).toBe(true);
    const log = await json(["deliveries", hookId, "--json"]);
    expect(log.length).toBe(1);
    expect(log[0]).toMatchObject({ status: "delivered", test: true, attempts: 1 });
    const table = await run(["deliveries", hookId]);
    expect(table.stdout).toContain("bug.created (test)");
    vendor.on("/cli-hook", () => ({ status: 500, body: "broken" }));
    const failing = await run(["test", hookId]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("failed: HTTP 500");
    expect(failing.stdout).toContain("answer: broken");
  });

  test("MCP: list_connectors and list_connector_deliveries are read-only and answer what the API does", async () => {
    const { client, call, close } = await mcpSession(box, env);
    try {
      const { tools } = await client.listTools();
      for (const name of ["list_connectors", "list_connector_deliveries"]) {
        expect(tools.find((t) => t.name === name)?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      }
      const listed = await call("list_connectors", {});
      expect(JSON.parse(listed.text)).toEqual((await ts.api("/api/admin/connectors")).body);
      expect(listed.text).not.toContain(secret);
      const slack = JSON.parse((await call("list_connectors", { q: "slack" })).text);
      expect(slack.map((c: any) => c.name)).toEqual(["alerts"]);
      // Vendors' answers come back wrapped as untrusted data (issue 25).
      const failed = JSON.parse((await call("list_connector_deliveries", { id: hookId, status: "failed" })).text).untrustedData;
      expect(failed.length).toBe(1);
      expect(failed[0]).toMatchObject({ status: "failed", lastStatus: 500 });
      const missing = await call("list_connector_deliveries", { id: "nope" });
      expect(missing.isError).toBe(true);
    } finally {
      await close();
    }
  });

  test("delete", async () => {
    const r = await run(["delete", hookId, "--yes"]);
    expect(r.stdout.trim()).toBe(`Deleted connector ${hookId}.`);
    expect((await run(["get", hookId])).code).toBe(1);
  });

  test("a read-write API token cannot create a connector (the admin role's)", async () => {
    const minted = await ts.api("/api/admin/tokens", { body: { name: "connectors-cli", access: "read-write" } });
    expect(minted.status).toBe(201);
    const refused = await svc(box, ["connectors", "create", "webhook", "--name", "by-token", "--event", "bug.created", "--set", `url=${vendor.url}/token-hook`, "--json"], { env: { ...env, SERVICE_CLI_TOKEN: minted.body.token } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("cannot manage");
    expect(((await ts.api("/api/admin/connectors?q=by-token")).body as unknown[]).length).toBe(0);
  });
});
