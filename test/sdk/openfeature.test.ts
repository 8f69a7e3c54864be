import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { OpenFeature as ServerFeature } from "@openfeature/server-sdk";
import { OpenFeature as WebFeature } from "@openfeature/web-sdk";
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
