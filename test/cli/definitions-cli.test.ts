import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeSandboxes, sandbox, startClientTestServer, svc, type ClientTestServer, type Sandbox } from "./client-helpers";

// Flags as code (issue 31): `svc export` writes YAML, `svc plan` exits 0 (nothing), 2 (changes) or 1
// (error) for CI, `svc apply --yes` makes the plan's changes, and a second apply is a no-op.

setDefaultTimeout(120_000);

let ts: ClientTestServer;
let box: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  ts = await startClientTestServer();
  const minted = await ts.api("/api/admin/tokens", { body: { name: "definitions-cli", access: "read-write" } });
  expect(minted.status).toBe(201);
  box = sandbox();
  env = { SERVICE_CLI_TOKEN: minted.body.token, SERVICE_URL: ts.url };
  expect((await ts.api("/api/admin/gates", { body: { name: "new-checkout", description: "The redesigned checkout" } })).status).toBe(201);
  expect((await ts.api("/api/admin/configs", { body: { name: "limits", schema: { type: "integer" }, value: 60 } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
  removeSandboxes();
});

describe("svc export / plan / apply", () => {
  test("export writes YAML; plan's exit codes; apply makes the change; the second plan is clean", async () => {
    const file = join(box.cwd, "svc.yaml");
    const exported = await svc(box, ["export", "--out", file], { env });
    expect(exported.code).toBe(0);
    const yaml = readFileSync(file, "utf8");
    expect(yaml).toContain("name: new-checkout");
    expect(Bun.YAML.parse(yaml)).toMatchObject({ version: 1, configs: [{ name: "limits", envs: { prod: { value: 60, rules: [] } } }] });

    const clean = await svc(box, ["plan", file], { env });
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain("No changes");

    writeFileSync(file, yaml.replace("value: 60", "value: 75"));
    const changed = await svc(box, ["plan", file], { env });
    expect(changed.code).toBe(2);
    expect(changed.stdout).toContain("~ configs limits");
    expect(changed.stdout).toMatch(/envs\.\w+\.value: 60 -> 75/);
    expect(changed.stdout).toContain("Plan: 0 to create, 1 to change, 0 to delete.");
    // Nothing changed yet.
    expect((await ts.api("/api/admin/configs/limits")).body.envs.dev.value).toBe(60);

    const applied = await svc(box, ["apply", file, "--yes"], { env });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("Applied: 0 created, 1 changed, 0 deleted.");
    const config = (await ts.api("/api/admin/configs/limits")).body;
    expect([config.envs.dev.value, config.envs.staging.value, config.envs.prod.value].filter((v: number) => v === 75).length).toBe(1);
    expect((await svc(box, ["plan", file], { env })).code).toBe(0);

    writeFileSync(file, "version: 1\ngates:\n  - name: [not, a, name]\n");
    const bad = await svc(box, ["plan", file], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("gates[0].name");
    const json = await svc(box, ["plan", join(box.cwd, "missing.yaml"), "--json"], { env });
    expect(json.code).toBe(1);
  });

  test("with prod requiring approval, svc plan says so and svc apply opens a change request: printed, exit 0, nothing published", async () => {
    expect((await ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: { prod: { required: true } } } })).status).toBe(200);
    try {
      const file = join(box.cwd, "prod.yaml");
      expect((await svc(box, ["export", "--only", "configs", "--out", file], { env })).code).toBe(0);
      const doc = Bun.YAML.parse(readFileSync(file, "utf8")) as any;
      const before = doc.configs[0].envs.prod.value;
      doc.configs[0].envs.prod.value = before + 1;
      writeFileSync(file, Bun.YAML.stringify(doc, null, 2));

      const plan = await svc(box, ["plan", file], { env });
      expect(plan.code).toBe(2);
      expect(plan.stdout).toContain("requires approval: svc apply opens a change request");

      const opened = await svc(box, ["apply", file, "--yes", "--reason", "Holiday traffic"], { env });
      expect(opened.code).toBe(0);
      expect(opened.stdout).toMatch(/^Opened change request cr_\w+ \(needs 1 approval\): svc apply: 0 created, 1 changed, 0 deleted$/m);
      const id = /cr_\w+/.exec(opened.stdout)![0];
      expect((await ts.api(`/api/admin/requests/${id}`)).body).toMatchObject({ state: "open", reason: "Holiday traffic", changes: [{ kind: "definitions.apply" }] });
      expect((await ts.api("/api/admin/configs/limits")).body.envs.prod.value).toBe(before);

      const json = await svc(box, ["apply", file, "--yes", "--json", "--title", "From CI"], { env });
      expect(json.code).toBe(0);
      const body = JSON.parse(json.stdout);
      expect(body.request).toMatchObject({ id: expect.stringMatching(/^cr_/), state: "open", approvalsRequired: 1, title: "From CI" });
      expect(body.plan.summary).toEqual({ create: 0, update: 1, delete: 0 });
    } finally {
      expect((await ts.api("/api/admin/requests/policy", { method: "PUT", body: { envs: {} } })).status).toBe(200);
    }
  });
});
