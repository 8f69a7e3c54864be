import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { everyRoute, startTestServer, type TestServer } from "./helpers";

/**
 * Walks every route the app registers, so each module added later is
 * covered without touching this file: no credential, a wrong credential
 * kind, and a foreign project's admin key must all be refused before the
 * route does anything.
 */
let s: TestServer;
let foreign: Awaited<ReturnType<TestServer["newProject"]>>;
type Route = { method: string; path: string };
let adminRoutes: Route[] = [];
let sdkRoutes: Route[] = [];

beforeAll(async () => {
  s = await startTestServer();
  foreign = await s.newProject("Foreign");
  // The modules' routes come from the route table: each is reached through its stand-in, as on a fresh server.
  const routes: Route[] = everyRoute(s);
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

describe("another organisation sees and changes nothing of ours", () => {
  /**
   * Every kind of resource is seeded in our project under distinctive
   * names, then probed with two foreign credentials: the foreign project's
   * admin key, and the access token of a person who belongs to the foreign
   * organisation only. The walk is generic: every admin route, its path
   * parameters filled from the table of our seeded ids and names below.
   */
  const CANARY = "leak-canary";
  const MEMBER = `${CANARY}-teammate@example.com`;
  /** Our seeded ids and names, per path parameter name (an unknown parameter gets every id). */
  let ours: Record<string, string[]> = {};
  /** Every string of ours that must never reach a foreign caller. */
  let secrets: string[] = [];
  let stranger = "";

  type Probe = { label: string; key: string };
  let probes: Probe[] = [];

  beforeAll(async () => {
    const created = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await s.api(path, { body, headers });
      if (r.status !== 201 && r.status !== 200) throw new Error(`seeding ${path}: ${r.status} ${r.text}`);
      return r.body;
    };
    const ks = await created("/api/admin/killswitches", { name: `${CANARY}-ks`, value: true, switches: { [`${CANARY}-sub`]: true } });
    const cfg = await created("/api/admin/configs", { name: `${CANARY}-cfg`, schema: { type: "object" }, value: { canary: `${CANARY}-value` } });
    const draft = await s.api(`/api/admin/configs/${cfg.id}/drafts`, {
      method: "PUT",
      headers: { "x-project-id": s.projectId },
      body: { env: "dev", value: { canary: `${CANARY}-draft` } },
    });
    expect(draft.status, draft.text).toBe(200);
    const keys: { id: string; key: string }[] = [];
    for (const type of ["admin", "server", "client"]) keys.push(await created("/api/admin/keys", { type, name: `${CANARY}-key-${type}` }));
    const token = await created("/api/admin/tokens", { name: `${CANARY}-token`, access: "read-write" });
    await s.addMember(MEMBER, "editor");
    // A person of the foreign organisation only (owner there: nothing they are refused here is for lack of a role).
    await s.addMember("stranger@example.com", "owner", foreign.projectId);
    stranger = await s.accessTokenFor("stranger@example.com", foreign.projectId);

    const keyIds = keys.map((k) => k.id);
    ours = {
      id: [ks.id, ks.name, cfg.id, cfg.name, ...keyIds, token.id, s.projectId],
      email: [MEMBER],
      env: ["prod", "dev"],
      "*": [ks.name, `${ks.name}/${CANARY}-sub`, cfg.name],
    };
    const tail = (secret: string) => `\u2026${secret.slice(-4)}`; // the masked form lists show
    secrets = [
      CANARY, // every name, value, draft and the member's email
      s.projectId,
      s.organisationId,
      "Main project",
      ks.id,
      cfg.id,
      ...keyIds,
      token.id,
      ...[s.adminKey, s.serverKey, s.clientKey, ...keys.map((k) => k.key), token.token].map(tail),
    ];
    probes = [
      { label: "foreign admin key", key: foreign.adminKey },
      { label: "foreign person's access token", key: stranger },
    ];
  });

  const paramsOf = (path: string) => (path.match(/:[A-Za-z_]+|\*$/g) ?? []).map((p) => (p === "*" ? "*" : p.slice(1)));
  /** Every concrete path of a route with our values in its parameters, and the values it carries. */
  function fillWith(path: string): { path: string; values: string[] }[] {
    let out = [{ path, values: [] as string[] }];
    for (const param of paramsOf(path)) {
      const values = ours[param] ?? ours.id!;
      const pattern = param === "*" ? /\*$/ : `:${param}`;
      out = out.flatMap((p) => values.map((v) => ({ path: p.path.replace(pattern, param === "*" ? v : encodeURIComponent(v)), values: [...p.values, v] })));
    }
    return out;
  }
  const fill = (path: string) => fillWith(path).map((p) => p.path);
  /** Project header variants: none, the caller's own project, ours. */
  const headerVariants = (own: string | null) => [
    { label: "no X-Project-Id", headers: {} as Record<string, string> },
    ...(own ? [{ label: "own X-Project-Id", headers: { "x-project-id": own } }] : []),
    { label: "our X-Project-Id", headers: { "x-project-id": s.projectId } },
  ];
  /**
   * Our secrets in an answer, not counting the caller's own words echoed back
   * (an error may name the id or X-Project-Id it was sent: the caller knew them).
   */
  const leaked = (text: string, sent: string[]) => {
    let rest = text;
    for (const echo of [...sent].sort((a, b) => b.length - a.length)) rest = rest.replaceAll(echo, "<sent>");
    return secrets.filter((secret) => rest.includes(secret));
  };

  /** What we see of our own project: every admin GET, read with our admin key. */
  async function ourView(): Promise<Record<string, string>> {
    const view: Record<string, string> = {};
    for (const route of adminRoutes.filter((r) => r.method === "GET")) {
      for (const path of fill(route.path)) {
        const r = await s.api(path, { headers: { "x-project-id": s.projectId } });
        // lastUsedAt moves whenever our own keys are used to read.
        view[path] = `${r.status} ${r.text.replace(/"lastUsedAt":("[^"]*"|null)/g, "")}`;
      }
    }
    for (const env of ["dev", "prod"]) view[`snapshot ${env}`] = (await s.api(`/api/sdk/v1/snapshot?env=${env}`, { key: null, headers: { "x-sdk-key": s.serverKey } })).text;
    return view;
  }

  test("the probe can see a leak: our own admin key finds every seeded secret on the same routes", async () => {
    const texts: string[] = [];
    let byIdFound = 0;
    for (const route of adminRoutes.filter((r) => r.method === "GET")) {
      for (const path of fill(route.path)) {
        const r = await s.api(path, { headers: { "x-project-id": s.projectId } });
        texts.push(r.text);
        if (path !== route.path && r.status === 200) byIdFound++;
      }
    }
    const all = texts.join("\n");
    for (const secret of secrets) expect(all.includes(secret), `our own answers lack ${secret}`).toBe(true);
    expect(byIdFound).toBeGreaterThan(10);
  });

  test("every admin GET, by list, id and name, with and without X-Project-Id: none of ours in any answer; ours are 403/404", async () => {
    const failures: string[] = [];
    let requests = 0;
    for (const probe of probes) {
      for (const route of adminRoutes.filter((r) => r.method === "GET")) {
        const byId = paramsOf(route.path).some((p) => p !== "env");
        for (const { path, values } of fillWith(route.path)) {
          for (const variant of headerVariants(foreign.projectId)) {
            requests++;
            const r = await s.api(path, { key: probe.key, headers: variant.headers });
            const where = `${probe.label}, ${variant.label}: GET ${path}`;
            if (r.status >= 500) failures.push(`${where}: ${r.status}`);
            const found = leaked(r.text, [...values, ...Object.values(variant.headers)]);
            if (found.length) failures.push(`${where}: shows ${found.join(", ")} in ${r.text.slice(0, 300)}`);
            if (variant.label === "our X-Project-Id" && r.status !== 403) failures.push(`${where}: ${r.status}, not 403`);
            // Without the header, a route that requires X-Project-Id refuses before any lookup: also a refusal.
            const headerRequired = variant.label === "no X-Project-Id" && r.status === 400 && r.body?.code === "BAD_REQUEST" && /X-Project-Id/.test(r.body?.detail ?? "");
            if (byId && ![403, 404].includes(r.status) && !headerRequired) failures.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(200);
  });

  test("every admin write on our resources, by id and by name, is refused and changes nothing we read back", async () => {
    const before = await ourView();
    const failures: string[] = [];
    const reached = new Set<string>();
    // Bodies a handler would act on (the schemas drop or refuse what they do not take).
    const bodies = [
      { env: "prod", switchKey: `${CANARY}-sub`, value: false, version: 1, name: "pwned", role: "owner", type: "admin", access: "read-write", schema: {} },
      { env: "prod", value: false },
      { role: "owner" },
      {},
    ];
    for (const probe of probes) {
      for (const route of adminRoutes.filter((r) => r.method !== "GET")) {
        const hasParams = paramsOf(route.path).length > 0;
        for (const { path, values } of fillWith(route.path)) {
          // A create (no path parameter) in the caller's own project is its right; in ours it is refused.
          for (const variant of headerVariants(foreign.projectId).filter((v) => hasParams || v.label === "our X-Project-Id")) {
            for (const body of route.method === "DELETE" ? [undefined] : bodies) {
              const r = await s.api(path, { method: route.method, key: probe.key, headers: variant.headers, body });
              const where = `${probe.label}, ${variant.label}: ${route.method} ${path} ${JSON.stringify(body ?? "")}`;
              const found = leaked(r.text, [...values, ...Object.values(variant.headers), ...Object.values(body ?? {}).filter((v) => typeof v === "string")]);
              if (found.length) failures.push(`${where}: shows ${found.join(", ")} in ${r.text.slice(0, 300)}`);
              if ([403, 404].includes(r.status)) reached.add(`${route.method} ${route.path}`);
              else if (!(r.status === 400 && ["VALIDATION", "BAD_REQUEST"].includes(r.body?.code))) failures.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // Each write route was refused by its authorisation or its lookup (not only by its body schema).
    for (const route of adminRoutes.filter((r) => r.method !== "GET")) expect(reached.has(`${route.method} ${route.path}`), `${route.method} ${route.path}`).toBe(true);
    const after = await ourView();
    for (const path of Object.keys(before)) expect(after[path], path).toBe(before[path]);
  });
});
