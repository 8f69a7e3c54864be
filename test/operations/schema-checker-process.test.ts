/**
 * The config schema checker runs as the server's child process (src/modules/configs/schema-checker.ts). A server
 * that ends any way at all, killed included, leaves no checker behind: the child ends when its channel closes.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tempDir } from "../helpers";
import { type InitOutput, SVC_SOURCE, freshStoreArgs, run, startServe } from "../cli/process";
import { childrenOf, ended, running } from "../support/children";

const dataDir = tempDir("svc-checker-");
const store = await freshStoreArgs();
afterAll(async () => {
  await store.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test("a server killed with SIGKILL leaves no schema checker running", async () => {
  const init = await run([...SVC_SOURCE, "init", "--data", dataDir, ...store.args, "--json"]);
  expect(init.code, init.stderr).toBe(0);
  const keys = JSON.parse(init.stdout) as InitOutput;
  const server = await startServe([...SVC_SOURCE, "serve", "--port", "0", "--data", dataDir, ...store.args]);
  try {
    expect(childrenOf(server.proc.pid)).toEqual([]);
    const created = await fetch(`${server.url}/api/admin/configs`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "limits", schema: { type: "integer", maximum: 3 }, value: 2 }),
    });
    expect(created.status).toBe(201);
    const [checker, ...others] = childrenOf(server.proc.pid);
    expect(others).toEqual([]);
    expect(running(checker!)).toBe(true);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    expect(await ended(checker!)).toBe(true);
  } finally {
    if (server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
  }
}, 60_000);
