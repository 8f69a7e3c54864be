import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { saveDeviceSignIn, removeSandboxes, sandbox, startClientTestServer, svc, svcJson, type ClientTestServer, type Sandbox } from "./client-helpers";

// Each test spawns the CLI several times.
setDefaultTimeout(60_000);

let ts: ClientTestServer;
let box: Sandbox;
/** A project the signed-in user cannot reach. */
let foreign: Awaited<ReturnType<ClientTestServer["newProject"]>>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const other = await ts.server.ctx.services.projects.createOrganisationWithProject({ projectName: "Foreign", ownerEmail: "stranger@example.com" });
  const adminKey = (await ts.server.ctx.services.keys.mint(other.project.id, { type: "admin" })).key;
  foreign = { projectId: other.project.id, organisationId: other.organisation.id, adminKey, serverKey: "", clientKey: "" };
  box = sandbox();
  await saveDeviceSignIn(ts, box);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

async function killswitch(name: string) {
  const r = await ts.api(`/api/admin/killswitches/${name}`);
  expect(r.status).toBe(200);
  return r.body;
}

describe("svc toggle", () => {
  beforeAll(async () => {
    expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout", switches: { "new-ui": false } } })).status).toBe(201);
  });

  test("flips prod by default, sets with --on/--off, targets one env and one sub-switch", async () => {
    const flipped = await svcJson(box, ["toggle", "checkout"]);
    expect(flipped).toMatchObject({ env: "prod", switchKey: null, previous: false, value: true, version: 2, published: { value: true, switches: { "new-ui": false } } });
    expect((await killswitch("checkout")).envs.prod).toMatchObject({ value: true, version: 2, updatedBy: "owner@example.com" });

    const off = await svc(box, ["toggle", "checkout", "--env", "staging", "--off"]);
    expect(off.code).toBe(0);
    // The env it acted on comes first (issue 9).
    expect(off.stdout.trim()).toBe("staging: checkout off → off (version 2)");

    const sub = await svc(box, ["toggle", "checkout", "--switch", "new-ui", "--on", "--env", "dev"]);
    expect(sub.stdout.trim()).toBe("dev: checkout/new-ui off → on (version 2)");
    // --on twice publishes the same value: a retry cannot undo the first call.
    expect((await svcJson(box, ["toggle", "checkout", "--switch", "new-ui", "--on", "--env", "dev"])).value).toBe(true);

    const ks = await killswitch("checkout");
    expect(ks.envs.dev).toMatchObject({ value: false, switches: { "new-ui": true }, version: 3 });
    expect(ks.envs.staging).toMatchObject({ value: false, version: 2 });
    expect(ks.envs.prod).toMatchObject({ value: true, version: 2 });
  });

  test("failures: unknown name (1), bad flags (2), foreign project (1); nothing changes", async () => {
    const before = await killswitch("checkout");
    const missing = await svc(box, ["toggle", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("NOT_FOUND");
    const json = await svc(box, ["toggle", "nope", "--json"]);
    expect(JSON.parse(json.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
    expect((await svc(box, ["toggle", "checkout", "--on", "--off"])).code).toBe(2);
    expect((await svc(box, ["toggle", "checkout", "--env", "qa"])).code).toBe(2);
    expect((await svc(box, ["toggle"])).code).toBe(2);
    expect((await svc(box, ["toggle", "a", "b"])).code).toBe(2);
    const forbidden = await svc(box, ["toggle", "checkout", "--project", foreign.projectId]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain("FORBIDDEN");
    expect(await killswitch("checkout")).toEqual(before);
  });
});

describe("svc sdk keys", () => {
  test("list (masked), create (secret once), revoke", async () => {
    const listed = await svcJson(box, ["sdk", "keys", "list"]);
    expect(listed.length).toBe(3);
    const listText = JSON.stringify(listed);
    for (const secret of [ts.adminKey, ts.serverKey, ts.clientKey]) expect(listText).not.toContain(secret);

    const created = await svcJson(box, ["sdk", "keys", "create", "--type", "client", "--name", "web"]);
    expect(created).toMatchObject({ type: "client", name: "web" });
    expect(created.key).toStartWith("sdk_client_");
    const stored = (await ts.api("/api/admin/keys")).body;
    expect(stored.find((k: any) => k.id === created.id)).toMatchObject({ type: "client", name: "web" });

    const human = await svc(box, ["sdk", "keys", "list"]);
    expect(human.stdout).toMatch(/^ID\s+TYPE\s+ENV\s+NAME\s+KEY\s+CREATED\s+LAST USED$/m);
    expect(human.stdout).toContain(created.id);
    expect(human.stdout).not.toContain(created.key);

    // A browser key is bound to one env (issue 28): `--env`, shown in the list.
    const browser = await svcJson(box, ["sdk", "keys", "create", "--type", "browser", "--env", "staging", "--name", "web app"]);
    expect(browser).toMatchObject({ type: "browser", env: "staging", name: "web app" });
    expect(browser.key).toStartWith("sdk_browser_");
    expect((await svc(box, ["sdk", "keys", "list"])).stdout).toMatch(new RegExp(`${browser.id}\\s+browser\\s+staging\\s+web app`));
    const badEnv = await svc(box, ["sdk", "keys", "create", "--type", "browser", "--env", "qa"]);
    expect(badEnv.code).not.toBe(0);
    expect(badEnv.stderr).toContain("--env");

    const defaultType = await svc(box, ["sdk", "keys", "create"]);
    expect(defaultType.stdout).toContain("Created server key");
    expect(defaultType.stdout).toContain("shown only now");

    const revoked = await svc(box, ["sdk", "keys", "revoke", created.id]);
    expect(revoked.code).toBe(0);
    expect((await ts.api("/api/admin/keys")).body.some((k: any) => k.id === created.id)).toBe(false);
    expect((await ts.api("/api/admin/keys", { key: created.key })).status).toBe(401);
  });

  test("failures: unknown id (1), usage (2), foreign project (1)", async () => {
    const count = (await ts.api("/api/admin/keys")).body.length;
    const unknown = await svc(box, ["sdk", "keys", "revoke", "key_nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("NOT_FOUND");
    for (const args of [["sdk"], ["sdk", "keys"], ["sdk", "tokens", "list"], ["sdk", "keys", "create", "--type", "root"], ["sdk", "keys", "list", "--type", "admin"], ["sdk", "keys", "revoke"]]) {
      expect((await svc(box, args)).code).toBe(2);
    }
    const forbidden = await svc(box, ["sdk", "keys", "create", "--project", foreign.projectId]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain("FORBIDDEN");
    expect((await ts.api("/api/admin/keys")).body.length).toBe(count);
    expect((await ts.api("/api/admin/keys", { key: foreign.adminKey })).body.length).toBe(1);
  });
});

describe("svc config", () => {
  beforeAll(async () => {
    const schema = { type: "object", properties: { max: { type: "integer", minimum: 1 } }, required: ["max"], additionalProperties: false };
    expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema, value: { max: 3 } } })).status).toBe(201);
  });

  test("get, set (draft only), publish, set --publish", async () => {
    const all = await svcJson(box, ["config", "get", "limits"]);
    expect(all.envs.prod).toMatchObject({ value: { max: 3 }, version: 1 });
    const human = await svc(box, ["config", "get", "limits", "--env", "prod"]);
    expect(human.stdout).toBe(`limits on prod (version 1):\n{\n  "max": 3\n}\n`);

    const draft = await svcJson(box, ["config", "set", "limits", "--env", "staging", "--value", '{"max":5}']);
    expect(draft.draft).toMatchObject({ env: "staging", baseVersion: 1 });
    expect(draft.published).toBeUndefined();
    let stored = (await ts.api("/api/admin/configs/limits")).body;
    expect(stored.envs.staging).toMatchObject({ value: { max: 3 }, version: 1 });
    expect(stored.drafts.staging).toMatchObject({ value: { max: 5 }, baseVersion: 1 });
    const withDraft = await svcJson(box, ["config", "get", "limits", "--env", "staging"]);
    expect(withDraft).toMatchObject({ env: "staging", value: { max: 3 }, version: 1, draft: { value: { max: 5 } } });

    const published = await svc(box, ["config", "publish", "limits", "--env", "staging"]);
    expect(published.code).toBe(0);
    expect(published.stdout.trim()).toBe("Published limits on staging: version 2.");
    stored = (await ts.api("/api/admin/configs/limits")).body;
    expect(stored.envs.staging).toMatchObject({ value: { max: 5 }, version: 2 });
    expect(stored.drafts.staging).toBeUndefined();

    const both = await svcJson(box, ["config", "set", "limits", "--env", "prod", "--value", '{"max":9}', "--publish"]);
    expect(both.published).toMatchObject({ env: "prod", version: 2 });
    stored = (await ts.api("/api/admin/configs/limits")).body;
    expect(stored.envs.prod).toMatchObject({ value: { max: 9 }, version: 2 });
    expect(stored.envs.dev.version).toBe(1);
    const activity = (await ts.api("/api/admin/configs/limits/activity", { headers: { "x-project-id": ts.projectId } })).body;
    expect(activity[0]).toMatchObject({ action: "config.publish", actorEmail: "owner@example.com", actorType: "user", payload: { env: "prod", version: 2 } });
  });

  test("failures: bad JSON and missing flags (2), schema violation and unknown config (1); nothing changes", async () => {
    const before = (await ts.api("/api/admin/configs/limits")).body;
    expect((await svc(box, ["config", "set", "limits", "--env", "dev", "--value", "{max:1}"])).code).toBe(2);
    expect((await svc(box, ["config", "set", "limits", "--value", "1"])).code).toBe(2);
    expect((await svc(box, ["config", "set", "limits", "--env", "dev"])).code).toBe(2);
    expect((await svc(box, ["config", "publish", "limits"])).code).toBe(2);
    expect((await svc(box, ["config", "get", "limits", "--publish"])).code).toBe(2);
    expect((await svc(box, ["config", "delete", "limits"])).code).toBe(2);
    const invalid = await svc(box, ["config", "set", "limits", "--env", "dev", "--value", '{"max":0}', "--publish"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("VALIDATION");
    expect(invalid.stderr).toContain("max");
    const missing = await svc(box, ["config", "get", "nope", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: "NOT_FOUND", status: 404 });
    const noDraft = await svc(box, ["config", "publish", "limits", "--env", "dev"]);
    expect(noDraft.code).toBe(1);
    expect((await ts.api("/api/admin/configs/limits")).body).toEqual(before);
  });
});

describe("svc bind", () => {
  test("writes .service in the working directory", async () => {
    const dir = join(box.root, "repo");
    mkdirSync(dir, { recursive: true });
    const r = await svc(box, ["bind", ts.projectId], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, ".service"), "utf8"))).toEqual({ project_id: ts.projectId });
    expect((await svc(box, ["bind"], { cwd: dir })).code).toBe(2);
    // A name may hold spaces: it is looked up among your projects (none is called this), and the binding stays.
    expect((await svc(box, ["bind", "has space"], { cwd: dir })).code).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, ".service"), "utf8"))).toEqual({ project_id: ts.projectId });
  });
});
