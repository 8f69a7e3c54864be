import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature as ServerFeature } from "@openfeature/server-sdk";
import { OpenFeature as WebFeature } from "@openfeature/web-sdk";
import { createClient } from "../../src/sdk/index";
import { startTestServer, type TestServer } from "../helpers";

// Real OpenFeature SDKs with the real OFREP providers, against a real server.
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api("/api/admin/killswitches", { body: { name: "checkout", value: true, switches: { eu: false } } })).status).toBe(201);
  const config = await s.api("/api/admin/configs", {
    body: { name: "limits", schema: { type: "object" }, value: { perMinute: 120, burst: 10 } },
  });
  expect(config.status).toBe(201);
  expect((await s.api("/api/admin/killswitches/checkout/toggle", { body: { env: "dev" } })).status).toBe(200);
});
afterAll(async () => {
  await ServerFeature.close();
  await WebFeature.close();
  await s.stop();
});

describe("@openfeature/server-sdk with @openfeature/ofrep-provider", () => {
  test("reads killswitches, sub-switches and configs; env from the context", async () => {
    await ServerFeature.setProviderAndWait("svc", new OFREPProvider({ baseUrl: s.url, headers: [["X-SDK-Key", s.serverKey]] }));
    const client = ServerFeature.getClient("svc");

    const flat = await client.getBooleanDetails("checkout", false, { targetingKey: "user-1" });
    expect(flat).toMatchObject({ value: true, reason: "STATIC", variant: "on", flagMetadata: { version: 1 } });
    expect(flat.errorCode).toBeUndefined();
    expect(await client.getBooleanValue("checkout/eu", true)).toBe(false);
    // No entry for "us": the flat value.
    expect(await client.getBooleanValue("checkout/us", false)).toBe(true);
    expect(await client.getBooleanValue("checkout", true, { env: "dev" })).toBe(false);
    expect(await client.getObjectValue("limits", {})).toEqual({ perMinute: 120, burst: 10 });

    const missing = await client.getBooleanDetails("no-such-flag", true);
    expect(missing).toMatchObject({ value: true, errorCode: "FLAG_NOT_FOUND", reason: "ERROR" });
    const badEnv = await client.getBooleanDetails("checkout", false, { env: "production" });
    expect(badEnv).toMatchObject({ value: false, errorCode: "INVALID_CONTEXT" });
    // A config read as a boolean is a type mismatch: the default.
    expect(await client.getBooleanDetails("limits", false)).toMatchObject({ value: false, errorCode: "TYPE_MISMATCH" });
  });

  test("a wrong key gives the default with an error, never a value", async () => {
    await ServerFeature.setProviderAndWait("svc-bad", new OFREPProvider({ baseUrl: s.url, headers: [["Authorization", `Bearer ${s.adminKey}`]] }));
    const details = await ServerFeature.getClient("svc-bad").getBooleanDetails("checkout", false);
    expect(details.value).toBe(false);
    expect(details.reason).toBe("ERROR");
  });
});

describe("@openfeature/web-sdk with @openfeature/ofrep-web-provider", () => {
  test("bulk-evaluates, then picks up a publish by polling (304 while unchanged)", async () => {
    const statuses: number[] = [];
    const provider = new OFREPWebProvider({
      baseUrl: s.url,
      headers: [["X-SDK-Key", s.serverKey]],
      pollInterval: 100,
      cacheMode: "disabled",
      changeDetection: "polling",
      fetchImplementation: async (input: RequestInfo | URL, init?: RequestInit) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    await WebFeature.setContext({ targetingKey: "user-1", env: "prod" });
    await WebFeature.setProviderAndWait(provider);
    const client = WebFeature.getClient();

    expect(client.getBooleanDetails("checkout", false)).toMatchObject({ value: true, variant: "on", reason: "STATIC" });
    expect(client.getBooleanValue("checkout/eu", true)).toBe(false);
    expect(client.getObjectValue("limits", {})).toEqual({ perMinute: 120, burst: 10 });
    expect(client.getBooleanDetails("no-such-flag", true)).toMatchObject({ value: true, errorCode: "FLAG_NOT_FOUND" });

    const deadline = Date.now() + 3000;
    while (!statuses.includes(304) && Date.now() < deadline) await Bun.sleep(20);
    expect(statuses).toContain(304);

    expect((await s.api("/api/admin/killswitches/checkout/toggle", { body: {} })).status).toBe(200);
    while (client.getBooleanValue("checkout", true) !== false && Date.now() < deadline + 3000) await Bun.sleep(20);
    expect(client.getBooleanValue("checkout", true)).toBe(false);
  });
});

describe("experiments through OFREP: the same variant as the svc SDK", () => {
  beforeAll(async () => {
    expect((await s.api("/api/admin/universes", { body: { name: "of-users" }, headers: { "x-project-id": s.projectId } })).status).toBe(201);
    expect((await s.api("/api/admin/gates", { body: { name: "of-nav", rules: [{ conditions: [], passPercentage: 0 }] } })).status).toBe(201);
    const created = await s.api("/api/admin/experiments", {
      body: {
        name: "of-button",
        universe: "of-users",
        variants: [
          { key: "control", weight: 1, value: "blue" },
          { key: "green", weight: 1, value: "green", override: { kind: "gate", name: "of-nav", value: true } },
        ],
        allocation: [0, 6000],
      },
    });
    expect(created.status).toBe(201);
    expect((await s.api(`/api/admin/experiments/${created.body.id}/start`, { method: "POST" })).status).toBe(200);
  });

  test("@openfeature/server-sdk: string details per unit match getVariant; the overridden gate matches isEnabled", async () => {
    await ServerFeature.setProviderAndWait("svc-exp", new OFREPProvider({ baseUrl: s.url, headers: [["X-SDK-Key", s.serverKey]] }));
    const client = ServerFeature.getClient("svc-exp");
    const svc = createClient({ baseUrl: s.url, sdkKey: s.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
    await svc.ready();
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const unit = `of-user-${i}`;
      const local = svc.getVariant("of-button", { user_id: unit }, { exposure: false });
      const details = await client.getStringDetails("of-button", "fallback", { targetingKey: unit });
      expect(details.errorCode).toBeUndefined();
      if (local.variant) {
        seen.add(local.variant);
        expect(details).toMatchObject({ value: local.value, variant: local.variant, reason: "SPLIT" });
      } else expect(details).toMatchObject({ value: "blue", variant: "control", reason: "DEFAULT" });
      expect(await client.getBooleanValue("of-nav", false, { targetingKey: unit })).toBe(local.variant === "green");
      expect(svc.isEnabled("of-nav", { user_id: unit })).toBe(local.variant === "green");
    }
    expect([...seen].sort()).toEqual(["control", "green"]);
    await svc.close();
  });

  test("@openfeature/web-sdk: the bulk evaluation carries the experiment for the context's unit", async () => {
    const svc = createClient({ baseUrl: s.url, sdkKey: s.serverKey, env: "prod", stream: false, flushIntervalMs: 60_000 });
    await svc.ready();
    const unit = Array.from({ length: 100 }, (_, i) => `web-user-${i}`).find((u) => svc.getVariant("of-button", { user_id: u }, { exposure: false }).variant === "green")!;
    expect(unit).toBeDefined();
    const provider = new OFREPWebProvider({ baseUrl: s.url, headers: [["X-SDK-Key", s.serverKey]], cacheMode: "disabled", changeDetection: "none" });
    await WebFeature.setContext({ targetingKey: unit, env: "prod" });
    await WebFeature.setProviderAndWait("svc-exp-web", provider);
    const client = WebFeature.getClient("svc-exp-web");
    expect(client.getStringDetails("of-button", "fallback")).toMatchObject({ value: "green", variant: "green", reason: "SPLIT" });
    expect(client.getBooleanValue("of-nav", false)).toBe(true);
    await svc.close();
  });
});
