import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, expectErrorShape, startTestServer } from "../helpers";

// GrowthBook's finished surfaces (route): GET /api/admin/growthbook says, per env, what GrowthBook's SDKs load
// from /api/features/{key} (counts, bytes) and what the mapping could not express and serves instead.

let ts: TestServer;

const UNMAPPED_LETTERS = { feature: "letters", construct: "regex /^\\pL+$/ uses RE2-only syntax", served: "false to every unit (the gate is off)" };

beforeAll(async () => {
  ts = await startTestServer({ experimentsEveryMs: 0, alertsEveryMs: 0 });
  expect((await ts.api("/api/admin/segments", { body: { name: "beta-testers", ids: ["u-1", "u-2"] } })).status).toBe(201);
  // Maps: a country rule at 25 %, and a segment's id list (a saved group).
  expect((await ts.api("/api/admin/gates", { body: { name: "new-nav", rules: [{ conditions: [{ attr: "country", op: "in", value: ["DE"] }], passPercentage: 25 }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/gates", { body: { name: "beta-only", rules: [{ conditions: [{ attr: "user_id", op: "in_segment", value: "beta-testers" }], passPercentage: 100 }] } })).status).toBe(201);
  // Does not map: an RE2-only regex (\pL) GrowthBook's SDKs cannot run; the gate is served off.
  expect((await ts.api("/api/admin/gates", { body: { name: "letters", rules: [{ conditions: [{ attr: "name", op: "regex", value: "^\\pL+$" }], passPercentage: 100 }] } })).status).toBe(201);
  expect((await ts.api("/api/admin/killswitches", { body: { name: "checkout", value: true, switches: { eu: true } } })).status).toBe(201);
});
afterAll(async () => {
  await ts.stop();
});

/** What a GrowthBook SDK loads for the env: its features and saved groups counted, its bytes. */
async function payloadOf(env: string) {
  const res = await fetch(`${ts.url}/api/features/${ts.serverKey}?env=${env}`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const body = JSON.parse(text);
  return { features: Object.keys(body.features).length, savedGroups: Object.keys(body.savedGroups ?? {}).length, payloadBytes: Buffer.byteLength(text), etag: res.headers.get("etag"), names: Object.keys(body.features).sort() };
}

describe("GET /api/admin/growthbook", () => {
  test("counts what GrowthBook SDKs load and lists what does not map, with what is served instead", async () => {
    const res = await ts.api("/api/admin/growthbook?env=prod");
    expect([res.status, res.text]).toEqual([200, expect.any(String)]);
    const payload = await payloadOf("prod");
    expect(payload.names).toEqual(["beta-only", "checkout", "checkout/eu", "letters", "new-nav"]);
    const revision = (await ts.api("/api/sdk/v1/snapshot?env=prod", { key: ts.serverKey })).body.revision;
    expect(res.body).toEqual({
      env: "prod",
      revision,
      etag: payload.etag,
      features: 5,
      savedGroups: 1,
      payloadBytes: payload.payloadBytes,
      unmapped: [UNMAPPED_LETTERS],
      paths: { features: "/api/features/{key}", stream: "/sub/{key}" },
    });
  });

  test("without env: the project's default env; each env answers its own published rules", async () => {
    expect((await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { defaultEnv: "staging" } })).status).toBe(200);
    try {
      const res = await ts.api("/api/admin/growthbook");
      expect(res.status).toBe(200);
      expect(res.body.env).toBe("staging");
      expect(res.body.unmapped).toEqual([UNMAPPED_LETTERS]);
    } finally {
      expect((await ts.api(`/api/admin/projects/${ts.projectId}`, { method: "PATCH", body: { defaultEnv: "prod" } })).status).toBe(200);
    }
    // letters gets a rule GrowthBook reads, on dev only: dev maps everything, prod still does not.
    const before = (await ts.api("/api/admin/growthbook?env=dev")).body;
    expect((await ts.api("/api/admin/gates/letters/rules", { method: "PUT", body: { env: "dev", rules: [{ conditions: [{ attr: "name", op: "regex", value: "^[a-z]+$" }], passPercentage: 100 }] } })).status).toBe(200);
    const dev = (await ts.api("/api/admin/growthbook?env=dev")).body;
    expect(dev.unmapped).toEqual([]);
    expect(dev.revision).toBeGreaterThan(before.revision);
    expect(dev.etag).not.toBe(before.etag);
    const payload = await payloadOf("dev");
    expect({ features: dev.features, savedGroups: dev.savedGroups, payloadBytes: dev.payloadBytes, etag: dev.etag }).toEqual({ features: payload.features, savedGroups: payload.savedGroups, payloadBytes: payload.payloadBytes, etag: payload.etag });
    expect((await ts.api("/api/admin/growthbook?env=prod")).body.unmapped).toEqual([UNMAPPED_LETTERS]);
  });

  test("a viewer and a read-only token may read it; no key is UNAUTHORIZED; an unknown env is VALIDATION", async () => {
    await ts.addMember("viewer@example.com", "viewer");
    const viewer = await ts.accessTokenFor("viewer@example.com");
    const seen = await ts.api("/api/admin/growthbook?env=prod", { key: viewer });
    expect(seen.status).toBe(200);
    expect(seen.body.unmapped).toEqual([UNMAPPED_LETTERS]);
    const readOnly = (await ts.api("/api/admin/tokens", { body: { name: "gb-read", access: "read-only" } })).body.token;
    expect((await ts.api("/api/admin/growthbook", { key: readOnly })).status).toBe(200);

    const anonymous = await ts.api("/api/admin/growthbook?env=prod", { key: null });
    expect(anonymous.status).toBe(401);
    expect(expectErrorShape(anonymous.body).code).toBe("UNAUTHORIZED");
    // An SDK key is another kind of key: FORBIDDEN, as on every admin route.
    const sdkKey = await ts.api("/api/admin/growthbook", { key: ts.serverKey });
    expect([sdkKey.status, expectErrorShape(sdkKey.body).code]).toEqual([403, "FORBIDDEN"]);

    const bad = await ts.api("/api/admin/growthbook?env=qa");
    expect(bad.status).toBe(400);
    expect(expectErrorShape(bad.body).code).toBe("VALIDATION");
  });
});
