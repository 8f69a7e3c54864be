import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TEST_ENGINE, type TestServer, expectErrorShape, startTestServer } from "../helpers";

// How many events arrived and what they carried (issue 27, item 11): counts per name over 24 h / 7 d, and a
// paged view of a name's newest raw events.

let ts: TestServer;
const HOUR = 3_600_000;
const now = Date.now();

beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.stop());

const ingest = (events: unknown[], key = ts.serverKey) => ts.api("/api/sdk/v1/events", { body: { events }, key });

describe("event counts", () => {
  test("per name over the last 24 h and 7 d, svc's own names left out, another project's events not counted", async () => {
    const r = await ingest([
      { name: "signup", ts: now - 2 * HOUR },
      { name: "signup", ts: now - 3 * HOUR },
      { name: "signup", ts: now - 3 * 24 * HOUR },
      { name: "signup", ts: now - 10 * 24 * HOUR },
      { name: "checkout", ts: now - 5 * 24 * HOUR },
      { name: "$exposure:exp_1", unitId: "u1", properties: { variant: "a" } },
    ]);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const other = await ts.newProject("Counts elsewhere");
    expect((await ingest([{ name: "signup" }, { name: "signup" }], other.serverKey)).status).toBe(202);

    const counts = await ts.api("/api/admin/event-counts");
    expect(counts.status, JSON.stringify(counts.body)).toBe(200);
    expect(counts.body.counts).toEqual([
      { name: "checkout", last24h: 0, last7d: 1 },
      { name: "signup", last24h: 2, last7d: 3 },
    ]);
    const since24 = Date.parse(counts.body.since.last24h);
    expect(since24 % HOUR).toBe(0);
    expect(now - since24).toBeLessThanOrEqual(24 * HOUR);
    expect(now - since24).toBeGreaterThan(23 * HOUR);
    expect(Date.parse(counts.body.since.last7d)).toBe(since24 - 6 * 24 * HOUR);
    expect((await ts.api("/api/admin/event-counts", { key: null })).status).toBe(401);
  });
});

describe("recent raw events", () => {
  test("newest first with their properties, paged by `next` without gaps or repeats, ties included", async () => {
    const sent = [
      ...Array.from({ length: 5 }, (_, i) => ({ name: "page.viewed", ts: now - (i + 1) * 60_000, unitId: `user-${i}`, value: i, properties: { path: `/p/${i}`, n: i, beta: i % 2 === 0 } })),
      // Four at the same time: the page boundary falls among them.
      ...Array.from({ length: 4 }, (_, i) => ({ name: "page.viewed", ts: now - 10 * 60_000, unitId: `tie-${i}`, properties: { path: "/tie" } })),
    ];
    expect((await ingest(sent)).status).toBe(202);
    const seen: any[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const r: { status: number; body: any } = await ts.api(`/api/admin/events/page.viewed/recent?limit=3${before ? `&before=${before}` : ""}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.name).toBe("page.viewed");
      expect(r.body.events.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.events);
      before = r.body.next;
      pages++;
    } while (before && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(9);
    expect(seen.slice(0, 5).map((e) => e.unitId)).toEqual(["user-0", "user-1", "user-2", "user-3", "user-4"]);
    expect(new Set(seen.slice(5).map((e) => e.unitId))).toEqual(new Set(["tie-0", "tie-1", "tie-2", "tie-3"]));
    expect(seen[0]).toEqual({ at: new Date(now - 60_000).toISOString(), ts: now - 60_000, unitId: "user-0", value: 0, properties: { path: "/p/0", n: 0, beta: true } });
    expect(seen[8].value).toBeNull();
    // By the event's id too; the catalog row was made pending by ingest.
    const event = (await ts.api("/api/admin/events/page.viewed")).body;
    expect((await ts.api(`/api/admin/events/${event.id}/recent?limit=1`)).body.events[0].unitId).toBe("user-0");
  });

  test("bad limits and cursors are VALIDATION naming the field; unknown or another project's events are 404", async () => {
    expect((await ingest([{ name: "bounded" }])).status).toBe(202);
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["before=not-a-cursor!", "before"],
      [`before=${Buffer.from("12:(0,1)x").toString("base64url")}`, "before"],
      // The other engine's position (a ctid on SQLite, a rowid on PostgreSQL) is refused too: never handed to SQL.
      [`before=${Buffer.from(TEST_ENGINE === "sqlite" ? "12:(0,1)" : "12:5").toString("base64url")}`, "before"],
    ] as const) {
      const r = await ts.api(`/api/admin/events/bounded/recent?${query}`);
      expect([query, r.status]).toEqual([query, 400]);
      expect(expectErrorShape(r.body).code).toBe("VALIDATION");
      expect(r.body.detail).toContain(field);
    }
    expect((await ts.api("/api/admin/events/no.such.event/recent")).status).toBe(404);
    const other = await ts.newProject("Recent elsewhere");
    expect((await ts.api("/api/admin/events/bounded/recent", { key: other.adminKey })).status).toBe(404);
  });

  test("an event named `counts` keeps its own path: the counts live under /api/admin/event-counts", async () => {
    expect((await ts.api("/api/admin/events", { body: { name: "counts" } })).status).toBe(201);
    expect((await ts.api("/api/admin/events/counts")).body.name).toBe("counts");
    expect((await ts.api("/api/admin/events/counts/recent")).body).toEqual({ name: "counts", events: [], next: null });
  });
});
