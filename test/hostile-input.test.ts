import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers";

/**
 * No request can make a 500: every registered route, called with a valid
 * credential and each of a set of hostile bodies, query strings and path
 * ids, must answer below 500 with the error shape. Walks app.routes, so new
 * modules are covered without touching this file.
 */
let s: TestServer;
type Route = { method: string; path: string };
let routes: Route[] = [];

const BODIES = [
  "",
  "null",
  "[]",
  '"text"',
  "42",
  "{",
  '{"a":',
  "{}",
  '{"name":null,"value":null,"env":null,"schema":null,"type":null}',
  '{"name":{"$gt":""},"env":["prod"],"value":{"nested":[1,2,3]},"switchKey":{}}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
  `{"name":"${"x".repeat(10_000)}","env":"prod"}`,
  '{"name":"\\u0000\\ud800","env":"prod","value":1e400}',
  JSON.stringify({ env: "prod", value: true, switchKey: "a", schema: { type: "object", properties: { a: { $ref: "#" } } } }),
  "[".repeat(5000) + "]".repeat(5000),
];
const IDS = ["probe-id", "%00", "..%2F..%2Fetc", "x".repeat(128), "%E2%80%AE", "name%20with%20space"];

beforeAll(async () => {
  s = await startTestServer();
  // Something to find by name on the resource routes.
  await s.api("/api/admin/killswitches", { body: { name: "probe-id" } });
  await s.api("/api/admin/configs", { body: { name: "probe-id", schema: { type: "object" }, value: {} } });
  routes = ((s.server.app as any).routes as any[]).map((r) => ({ method: r.method, path: r.path }));
});
afterAll(() => s.stop());

function paths(route: Route): string[] {
  if (!route.path.includes(":") && !route.path.endsWith("*")) return [route.path];
  return IDS.map((id) => route.path.replace(/:[A-Za-z_]+/g, id).replace(/\*$/, id));
}

test("every route answers hostile input below 500, in the error shape", async () => {
  const checked: string[] = [];
  let requests = 0;
  for (const route of routes) {
    if (route.path.startsWith("/openapi") || route.method === "ALL") continue;
    const credential = route.path.startsWith("/api/sdk/") || route.path.startsWith("/ofrep/") ? s.serverKey : s.adminKey;
    const headers: Record<string, string> = { "x-project-id": s.projectId, "x-sdk-key": s.clientKey };
    for (const path of paths(route)) {
      const bodies = ["GET", "HEAD"].includes(route.method) ? [undefined] : BODIES;
      for (const rawBody of bodies) {
        for (const query of ["", "?q=%FF&limit=-1&env=qa", `?q=${"a".repeat(200)}`]) {
          requests++;
          const r = await s.api(path + query, { method: route.method, rawBody, key: credential, headers });
          const label = `${route.method} ${path}${query} body=${rawBody?.slice(0, 40)}`;
          expect(r.status, label).toBeLessThan(500);
          if (r.status >= 400 && r.headers.get("content-type")?.includes("application/json") && r.body && typeof r.body === "object" && "code" in r.body) {
            expect(typeof r.body.error, label).toBe("string");
          }
        }
      }
    }
    checked.push(`${route.method} ${route.path}`);
  }
  expect(requests).toBeGreaterThan(3000);
  expect(checked.length).toBeGreaterThan(30);
}, 240_000);
