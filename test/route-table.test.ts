import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { currentRouteTable, routeTableSource } from "../scripts/gen-route-table";
import { MODULE_ROUTES } from "../src/modules/route-table";
import { routeMatches } from "../src/route-loading";
import { routeLoaderOf } from "../src/app";
import { startTestServer, type TestServer } from "./helpers";

/** The app's routes now, as `METHOD path`. */
const routesOf = (s: TestServer) => new Set(((s.server.app as any).routes as { method: string; path: string }[]).map((r) => `${r.method} ${r.path}`));
const moduleRoutes = (name: string) => MODULE_ROUTES[name]!.map(([method, path]) => `${method} ${path}`);

describe("module routes are added on demand (src/route-loading.ts)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());

  test("the route table is what the modules declare now (else: bun scripts/gen-route-table.ts)", async () => {
    const table = await currentRouteTable();
    expect(routeTableSource(table)).toBe(readFileSync(resolve(import.meta.dir, "../src/modules/route-table.ts"), "utf8"));
    expect(Object.keys(table).length).toBeGreaterThan(30);
  });

  test("a server starts with no module's routes; a request adds its module's, and only those", async () => {
    const before = routesOf(s);
    expect(before.has("GET /healthz")).toBe(true);
    for (const route of moduleRoutes("killswitches")) expect(before.has(route)).toBe(false);
    const loader = routeLoaderOf(s.server.app);
    expect(loader.isAdded("killswitches")).toBe(false);

    // A parameterised route first: Bun's table holds its stand-in.
    const missing = await s.api("/api/admin/killswitches/ksw_nope");
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("NOT_FOUND");
    expect(missing.body.error).not.toStartWith("No route");
    const created = await s.api("/api/admin/killswitches", { body: { name: "on-demand", value: true } });
    expect(created.status).toBe(201);
    const listed = await s.api("/api/admin/killswitches");
    expect(listed.status).toBe(200);
    expect(listed.body.map((k: { name: string }) => k.name)).toEqual(["on-demand"]);

    const after = routesOf(s);
    for (const route of moduleRoutes("killswitches")) expect(after.has(route)).toBe(true);
    expect(loader.isAdded("killswitches")).toBe(true);
    expect(loader.isAdded("configs")).toBe(false);
    for (const route of moduleRoutes("configs")) expect(after.has(route)).toBe(false);
  });

  test("a path with a trailing slash Bun's table cannot hold still reaches its module's route (Sentry's envelope)", async () => {
    const loader = routeLoaderOf(s.server.app);
    expect(loader.isAdded("errors")).toBe(false);
    const r = await fetch(`${s.url}/api/1/envelope/`, { method: "POST", body: "{}" });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { code: string }).code).toBe("UNAUTHORIZED");
    expect(loader.isAdded("errors")).toBe(true);
    // A HEAD with a trailing slash is a GET to Elysia's router: the module is added for it too.
    expect(loader.isAdded("i18n")).toBe(false);
    const head = await fetch(`${s.url}/api/admin/i18n/profiles/`, { method: "HEAD", headers: { authorization: `Bearer ${s.adminKey}`, "x-project-id": s.projectId } });
    expect(head.status).toBe(200);
    expect(loader.isAdded("i18n")).toBe(true);
    // A path no module has stays a 404, and adds nothing.
    const unknown = await fetch(`${s.url}/api/no-such-thing/`, { headers: { authorization: `Bearer ${s.adminKey}` } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toStartWith("No route for GET /api/no-such-thing/");
  });

  test("no module's route can take a request meant for another module's, but within a group added together", () => {
    // Bun's table holds every route (stand-ins included), so Bun picks as at a full start. The app's own router
    // then picks among the routes added: two modules whose routes overlap must be added together for it to pick
    // the same. Today only the dashboard's /metrics/* and the operations' /metrics overlap, and they share GET /metrics.
    const all = Object.entries(MODULE_ROUTES).flatMap(([name, list]) => list.map(([method, path]) => ({ name, method, path })));
    const shared = (a: string, b: string) => MODULE_ROUTES[a]!.some(([m, p]) => MODULE_ROUTES[b]!.some(([m2, p2]) => m === m2 && p === p2));
    const overlaps: string[] = [];
    for (const a of all) {
      for (const b of all) {
        if (a.name === b.name || a.method !== b.method || a.path === b.path) continue;
        if (routeMatches(a.path, b.path.replace(/:[^/]+/g, "x").replace(/\*$/, "x")) && !shared(a.name, b.name)) overlaps.push(`${a.name} ${a.method} ${a.path} / ${b.name} ${b.path}`);
      }
    }
    expect(overlaps).toEqual([]);
  });

  test("modules that declare the same method and path are added together, in manifest order (GET /metrics)", async () => {
    const owners = Object.entries(MODULE_ROUTES).filter(([, list]) => list.some(([m, p]) => m === "GET" && p === "/metrics")).map(([name]) => name);
    expect(owners.length).toBe(2);
    const page = await fetch(`${s.url}/metrics`, { headers: { accept: "text/html", host: `localhost:${s.server.port}` }, redirect: "manual" });
    expect(page.status).toBeLessThan(500);
    const loader = routeLoaderOf(s.server.app);
    for (const name of owners) expect(loader.isAdded(name)).toBe(true);
    // A Prometheus scrape from loopback still gets the exposition, whichever module was asked for first.
    const scrape = await fetch(`${s.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain("# TYPE");
  });

  test("the OpenAPI document lists every route, in the declared order, whatever was asked for first", async () => {
    const fresh = await startTestServer();
    try {
      const first = await fresh.api("/openapi/json", { key: null });
      const second = await s.api("/openapi/json", { key: null });
      expect(first.status).toBe(200);
      expect(Object.keys(second.body.paths)).toEqual(Object.keys(first.body.paths));
      const documented = Object.keys(first.body.paths).length;
      expect(documented).toBeGreaterThan(120);
      expect(routeLoaderOf(fresh.server.app).isAdded("i18n")).toBe(true);
    } finally {
      await fresh.stop();
    }
  });
});

test("routeMatches: parameters, wildcards and trailing slashes as Elysia's router reads them", () => {
  expect(routeMatches("/api/:projectNumber/envelope/", "/api/12/envelope/")).toBe(true);
  expect(routeMatches("/api/:projectNumber/envelope/", "/api/12/envelope")).toBe(true);
  expect(routeMatches("/api/admin/killswitches", "/api/admin/killswitches/")).toBe(true);
  expect(routeMatches("/api/admin/killswitches/:id", "/api/admin/killswitches/")).toBe(false);
  expect(routeMatches("/api/admin/killswitches/:id", "/api/admin/killswitches/a/b")).toBe(false);
  expect(routeMatches("/killswitches/*", "/killswitches/a/b/")).toBe(true);
  expect(routeMatches("/killswitches/*", "/gates/a")).toBe(false);
  expect(routeMatches("/", "/")).toBe(true);
});
