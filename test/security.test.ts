import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers";

/**
 * Walks every route the app registers, so each module added later is
 * covered without touching this file: no credential, a wrong credential
 * kind, and a foreign project's admin key must all be refused before the
 * route does anything.
 */
let s: TestServer;
let foreign: ReturnType<TestServer["newProject"]>;
type Route = { method: string; path: string };
let adminRoutes: Route[] = [];
let sdkRoutes: Route[] = [];

beforeAll(async () => {
  s = await startTestServer();
  foreign = s.newProject("Foreign");
  const app = (s.server as any).app ?? null;
  const routes: Route[] = (app?.routes ?? []).map((r: any) => ({ method: r.method, path: r.path }));
  if (routes.length === 0) throw new Error("expected RunningServer.app to expose the Elysia app");
  adminRoutes = routes.filter((r) => r.path.startsWith("/api/admin/"));
  sdkRoutes = routes.filter((r) => r.path.startsWith("/api/sdk/") || r.path.startsWith("/ofrep/"));
});
afterAll(() => s.stop());

function concrete(path: string): string {
  return path.replace(/:[A-Za-z_]+/g, "probe-id").replace(/\*$/, "probe-flag");
}

async function call(route: Route, init: { key?: string | null; headers?: Record<string, string> }) {
  const method = route.method;
  const hasBody = !["GET", "HEAD", "DELETE"].includes(method);
  return s.api(concrete(route.path), { method, key: init.key, headers: init.headers, rawBody: hasBody ? "{}" : undefined });
}

describe("every /api/admin route", () => {
  test("there are admin routes to check", () => {
    expect(adminRoutes.length).toBeGreaterThanOrEqual(5);
  });

  test("without a credential: 401 UNAUTHORIZED", async () => {
    for (const route of adminRoutes) {
      const r = await call(route, { key: null });
      expect(r.status, `${route.method} ${route.path}`).toBe(401);
      expect(r.body.code).toBe("UNAUTHORIZED");
    }
  });

  test("with an unknown key: 401 UNAUTHORIZED", async () => {
    for (const route of adminRoutes) {
      const r = await call(route, { key: "sdk_admin_doesnotexist0000000000" });
      expect(r.status, `${route.method} ${route.path}`).toBe(401);
    }
  });

  test("with a server or client key: 403 FORBIDDEN", async () => {
    for (const route of adminRoutes) {
      for (const key of [s.serverKey, s.clientKey]) {
        const r = await call(route, { key });
        expect(r.status, `${route.method} ${route.path}`).toBe(403);
        expect(r.body.code).toBe("FORBIDDEN");
      }
    }
  });

  test("a foreign admin key naming our project: 403 FORBIDDEN", async () => {
    for (const route of adminRoutes) {
      const r = await call(route, { key: foreign.adminKey, headers: { "x-project-id": s.projectId } });
      expect(r.status, `${route.method} ${route.path}`).toBe(403);
      expect(r.body.code).toBe("FORBIDDEN");
    }
  });
});

describe("every SDK runtime route", () => {
  test("without a key: 401; with an admin key: 403", async () => {
    for (const route of sdkRoutes) {
      const none = await call(route, { key: null });
      expect(none.status, `${route.method} ${route.path}`).toBe(401);
      const admin = await call(route, { key: s.adminKey });
      expect(admin.status, `${route.method} ${route.path}`).toBe(403);
    }
  });
});

test("nothing of our project appears in any GET answered to the foreign key", async () => {
  const ours = [s.projectId, s.adminKey.slice(-4)];
  for (const route of adminRoutes.filter((r) => r.method === "GET" && !r.path.includes(":"))) {
    const r = await s.api(route.path, { key: foreign.adminKey });
    expect(r.status, route.path).toBeLessThan(500);
    expect(r.text, route.path).not.toContain(ours[0]);
  }
});
