import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditOf } from "../../src/lib/audit";
import { TEST_ENGINE, type TestServer, startTestServer } from "../helpers";

let ts: TestServer;

const create = (body: unknown, key?: string | null) => ts.api("/api/admin/ops", { body, key });
const get = (ref: string | number) => ts.api(`/api/admin/ops/${encodeURIComponent(String(ref))}`);
const patch = (ref: string | number, body: unknown) => ts.api(`/api/admin/ops/${encodeURIComponent(String(ref))}`, { method: "PATCH", body });
const act = (ref: string | number, verb: "approve" | "reject") => ts.api(`/api/admin/ops/${encodeURIComponent(String(ref))}/${verb}`, { method: "POST" });
const intake = (path: "bug" | "feature-request", body: unknown, key = ts.clientKey) => ts.api(`/ops/${path}`, { key: null, headers: { "x-sdk-key": key }, body });
const events = async (type?: string) =>
  (await ts.store.all<{ type: string; payload: string }>("SELECT type, payload FROM outbox_events WHERE project_id = ? ORDER BY seq", ts.projectId))
    .filter((e) => type === undefined || e.type === type)
    .map((e) => ({ type: e.type, payload: JSON.parse(e.payload) }));
const audits = async (action: string) => (await auditOf(ts.store, ts.projectId, 1000)).filter((r) => r.action === action);
const numbers = async (projectId = ts.projectId) =>
  (await ts.store.all<{ number: number }>("SELECT number FROM ops_items WHERE project_id = ? ORDER BY number", projectId)).map((r) => Number(r.number));
const consecutive = (n: number, from = 1) => Array.from({ length: n }, (_, i) => i + from);

/** Intake limits out of the way: this file files from one address, and servers on one store share the counts. */
const HIGH_INTAKE_LIMITS = { perKey: { limit: 100_000, windowMs: 60_000 }, perAddress: { limit: 100_000, windowMs: 60_000 } };

beforeAll(async () => {
  ts = await startTestServer({ alertsEveryMs: 0, intake: HIGH_INTAKE_LIMITS });
});
afterAll(() => ts.stop());

describe("POST /api/admin/ops", () => {
  test("files a bug: 201 {id, number}, open, priority as sent, audited, bug.created in the outbox with the documented payload", async () => {
    const body = {
      type: "bug",
      title: "Checkout button does nothing on Safari",
      stepsToReproduce: "1. Add an item\n2. Press Checkout",
      actualResult: "Nothing happens",
      expectedResult: "The payment page opens",
      priority: "high",
    };
    const r = await create(body);
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["id", "number"]);
    expect(r.body.id).toMatch(/^fb_[A-Za-z0-9]+$/);
    expect(r.body.number).toBe(1);
    const item = (await get(r.body.id)).body;
    expect(item).toMatchObject({ ...body, id: r.body.id, number: 1, status: "open", source: "admin", sourceRef: null, useCase: null, timesFiled: 1 });
    expect(item.reportedBy).toMatch(/^admin-key:key_.+@keys\.local$/);
    const [event] = await events("bug.created");
    expect(event!.payload).toEqual({
      source: "admin",
      item: {
        id: r.body.id,
        number: 1,
        type: "bug",
        status: "open",
        priority: "high",
        title: body.title,
        stepsToReproduce: body.stepsToReproduce,
        actualResult: body.actualResult,
        expectedResult: body.expectedResult,
        useCase: null,
        source: "admin",
        reportedBy: item.reportedBy,
        createdAt: item.createdAt,
      },
    });
    const [audit] = await audits("ops.create");
    expect(audit).toMatchObject({ subjectId: r.body.id, subjectName: `#1 ${body.title}`, detail: { number: 1, type: "bug", status: "open", priority: "high", source: "admin" } });
  });

  test("a feature request: the next number, priority medium by default, feature_request.created", async () => {
    const r = await create({ type: "feature_request", title: "Export the audit trail as CSV" });
    expect(r.status).toBe(201);
    expect(r.body.number).toBe(2);
    expect((await get(2)).body).toMatchObject({ type: "feature_request", priority: "medium", status: "open", stepsToReproduce: null });
    expect((await events("feature_request.created")).map((e) => e.payload.item.number)).toEqual([2]);
  });

  test("error and alert items are the platform's: VALIDATION naming type; nothing filed, no number used", async () => {
    for (const type of ["error", "alert", "task", 1, null]) {
      const r = await create({ type, title: "x" });
      expect([String(type), r.status, r.body.code]).toEqual([String(type), 400, "VALIDATION"]);
      expect(r.body.detail).toMatch(/^type: /);
    }
    expect(await numbers()).toEqual([1, 2]);
  });

  test("bad bodies are VALIDATION naming the field; unknown fields are refused by name", async () => {
    const cases: [unknown, RegExp][] = [
      [{ type: "bug" }, /title: is required/],
      [{ type: "bug", title: "" }, /title: /],
      [{ type: "bug", title: "   " }, /title: 0 characters after trimming/],
      [{ type: "bug", title: "x".repeat(201) }, /title: /],
      [{ type: "bug", title: "two\nlines" }, /title: one line/],
      [{ type: "bug", title: "ok", priority: "urgent" }, /priority: must be one of: high, medium, low, nice_to_have/],
      [{ type: "bug", title: "ok", stepsToReproduce: "a\u0000b" }, /stepsToReproduce: /],
      [{ type: "bug", title: "ok", actualResult: "x".repeat(10_001) }, /actualResult: /],
      [{ type: "bug", title: "ok", useCase: "the spec's admin create has no useCase" }, /useCase: is not a field of this body/],
      [{ type: "bug", title: "ok", status: "done" }, /status: is not a field of this body/],
      [{ type: "bug", title: "ok", number: 7 }, /number: is not a field/],
      [[], /\(body\)/],
    ];
    for (const [body, detail] of cases) {
      const r = await create(body);
      expect([JSON.stringify(body).slice(0, 60), r.status, r.body.code]).toEqual([JSON.stringify(body).slice(0, 60), 400, "VALIDATION"]);
      expect(r.body.detail).toMatch(detail);
    }
    expect(await numbers()).toEqual([1, 2]);
    // Multi-line text is fine; a blank text field is stored as null.
    const ok = await create({ type: "bug", title: "  Trimmed title  ", stepsToReproduce: "line 1\r\nline 2\ttabbed", actualResult: "   " });
    expect(ok.status).toBe(201);
    expect((await get(ok.body.number)).body).toMatchObject({ title: "Trimmed title", stepsToReproduce: "line 1\r\nline 2\ttabbed", actualResult: null });
  });

  test("a read-only API token cannot file; a server or client key cannot reach it", async () => {
    const token = await ts.api("/api/admin/tokens", { body: { name: "ro", access: "read-only" } });
    expect(token.status).toBe(201);
    const before = await numbers();
    expect((await create({ type: "bug", title: "nope" }, token.body.token)).status).toBe(403);
    expect((await ts.api("/api/admin/ops", { key: token.body.token })).status).toBe(200);
    for (const key of [ts.serverKey, ts.clientKey]) expect((await create({ type: "bug", title: "nope" }, key)).status).toBe(403);
    expect(await numbers()).toEqual(before);
  });
});

describe("numbering", () => {
  test("concurrent filings (admin and intake together) get every number exactly once, no gap", async () => {
    const start = (await numbers()).length;
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? create({ type: "bug", title: `Concurrent ${i}` }) : intake("bug", { title: `Concurrent ${i}` }))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(60).fill(201));
    const got = results.map((r) => r.body.number as number).sort((a, b) => a - b);
    expect(got).toEqual(consecutive(60, start + 1));
    expect(await numbers()).toEqual(consecutive(start + 60));
    expect(Number((await ts.store.one<{ n: number }>("SELECT last_number AS n FROM ops_counters WHERE project_id = ?", ts.projectId))!.n)).toBe(start + 60);
  });

  test("numbers are per project: another project starts at 1", async () => {
    const other = await ts.newProject("Other", { publicTicketCreation: true });
    const r = await ts.api("/api/admin/ops", { body: { type: "bug", title: "Elsewhere" }, key: other.adminKey });
    expect(r.body.number).toBe(1);
    // And the items of one project are invisible from the other.
    expect((await ts.api("/api/admin/ops/1", { key: other.adminKey })).body.title).toBe("Elsewhere");
    expect((await ts.api(`/api/admin/ops/${r.body.id}`)).status).toBe(404);
  });

  test("a filing that fails in its transaction gives its number back", async () => {
    const before = await numbers();
    const { ops } = ts.server.ctx.services;
    await expect(
      ts.store.write(async () => {
        await ops.create(ts.projectId, { type: "bug", title: "Rolled back" }, { email: "test@example.com", type: "user" });
        throw new Error("the enclosing change failed");
      }),
    ).rejects.toThrow("the enclosing change failed");
    const next = await create({ type: "bug", title: "After the rollback" });
    expect(next.body.number).toBe(before.length + 1);
    expect((await events()).some((e) => e.payload.item?.title === "Rolled back")).toBe(false);
  });
});

describe.skipIf(TEST_ENGINE !== "postgres")("two servers on one PostgreSQL", () => {
  test("concurrent filings through both get every number once, no gap", async () => {
    const second = await startTestServer({ store: ts.storeUrl, intake: HIGH_INTAKE_LIMITS });
    try {
      const start = (await numbers()).length;
      const call = (server: TestServer, i: number) =>
        fetch(`${server.url}/api/admin/ops`, {
          method: "POST",
          headers: { authorization: `Bearer ${ts.adminKey}`, "content-type": "application/json" },
          body: JSON.stringify({ type: "bug", title: `Two servers ${i}` }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { number: number } }));
      const intakeOn = (server: TestServer, i: number) =>
        fetch(`${server.url}/ops/bug`, { method: "POST", headers: { "x-sdk-key": ts.clientKey, "content-type": "application/json" }, body: JSON.stringify({ title: `Two servers intake ${i}` }) }).then(
          async (r) => ({ status: r.status, body: (await r.json()) as { number: number } }),
        );
      const results = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 3 === 0 ? intakeOn(i % 2 ? second : ts, i) : call(i % 2 ? second : ts, i))));
      expect(results.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
      expect(results.map((r) => r.body.number).sort((a, b) => a - b)).toEqual(consecutive(120, start + 1));
      expect(await numbers()).toEqual(consecutive(start + 120));
    } finally {
      await second.stop();
    }
  }, 60_000);
});

describe("list and get", () => {
  test("pending approval first, then newest first; type, status and q narrow it", async () => {
    const pending = await intake("feature-request", { title: "Dark mode for the dashboard", useCase: "I work at night and the glare hurts" });
    expect(pending.status).toBe(201);
    const all = (await ts.api("/api/admin/ops")).body as { number: number; status: string }[];
    const firstOther = all.findIndex((i) => i.status !== "pending_approval");
    expect(all.slice(firstOther).every((i) => i.status !== "pending_approval")).toBe(true);
    expect(all[0]!.status).toBe("pending_approval");
    const others = all.slice(firstOther).map((i) => i.number);
    expect(others).toEqual([...others].sort((a, b) => b - a));

    const features = (await ts.api("/api/admin/ops?type=feature_request")).body as { type: string }[];
    expect(features.length).toBeGreaterThan(0);
    expect(features.every((i) => i.type === "feature_request")).toBe(true);
    const waiting = (await ts.api("/api/admin/ops?status=pending_approval")).body as { status: string }[];
    expect(waiting.every((i) => i.status === "pending_approval")).toBe(true);
    // q: case-insensitive over the title and the text fields.
    expect(((await ts.api("/api/admin/ops?q=GLARE")).body as { number: number }[]).map((i) => i.number)).toEqual([pending.body.number]);
    expect(((await ts.api("/api/admin/ops?q=press%20checkout")).body as { number: number }[]).map((i) => i.number)).toEqual([1]);
    expect(((await ts.api("/api/admin/ops?q=dark&type=bug")).body as unknown[]).length).toBe(0);
    for (const query of ["type=task", "status=closed", `q=${"q".repeat(101)}`]) {
      const r = await ts.api(`/api/admin/ops?${query}`);
      expect([query, r.status, r.body.code]).toEqual([query, 400, "VALIDATION"]);
      expect(r.body.detail).toMatch(new RegExp(`^${query.split("=")[0]}: `));
    }
  });

  test("get by id, number or #number; 404 otherwise", async () => {
    const byNumber = (await get(1)).body;
    expect((await get(byNumber.id)).body).toEqual(byNumber);
    expect((await get("#1")).body).toEqual(byNumber);
    for (const ref of ["999999", "fb_nothing", "#0", "1.5"]) {
      const r = await get(ref);
      expect([ref, r.status, r.body.code]).toEqual([ref, 404, "NOT_FOUND"]);
    }
  });
});

describe("states", () => {
  test("approve: pending_approval → open, ticket.approved with approvedBy, audited; approving again is VALIDATION naming status", async () => {
    const filed = await intake("bug", { title: "Login link expires too fast", stepsToReproduce: "Wait a minute", actualResult: "Expired", expectedResult: "Still valid" });
    expect(filed.status).toBe(201);
    expect((await get(filed.body.number)).body.status).toBe("pending_approval");
    const approved = await act(filed.body.number, "approve");
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ number: filed.body.number, status: "open" });
    expect(approved.body.statusChangedBy).toMatch(/^admin-key:/);
    const event = (await events("ticket.approved")).find((e) => e.payload.item.number === filed.body.number)!;
    expect(event.payload).toMatchObject({ item: { id: filed.body.id, type: "bug", status: "open", source: "intake", stepsToReproduce: "Wait a minute" }, approvedBy: approved.body.statusChangedBy });
    expect((await audits("ops.approve")).some((a) => a.subjectId === filed.body.id)).toBe(true);
    const again = await act(filed.body.number, "approve");
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("VALIDATION");
    expect(again.body.detail).toMatch(/^status: only pending_approval items are approved \(this one is open\)/);
    expect((await events("ticket.approved")).filter((e) => e.payload.item.number === filed.body.number)).toHaveLength(1);
  });

  test("PATCH walks open → in_progress → done → open; other moves are VALIDATION naming status; same status writes nothing", async () => {
    const { body: filed } = await create({ type: "bug", title: "Walk the states" });
    const moves: [string, number, string?][] = [
      ["pending_approval", 400, "status: from open an item goes to in_progress or done or rejected"],
      ["in_progress", 200],
      ["rejected", 400, "status: from in_progress an item goes to open or done"],
      ["in_progress", 200],
      ["done", 200],
      ["in_progress", 400, "status: from done an item goes to open"],
      ["open", 200],
      ["rejected", 200],
      ["open", 400, "status: from rejected an item goes nowhere (it is final)"],
    ];
    const updatesBefore = (await audits("ops.update")).length;
    for (const [status, code, detail] of moves) {
      const r = await patch(filed.number, { status });
      expect([status, r.status]).toEqual([status, code]);
      if (detail) {
        expect(r.body.code).toBe("VALIDATION");
        expect(r.body.detail).toBe(detail);
      } else expect(r.body.status).toBe(status);
    }
    expect((await get(filed.number)).body.status).toBe("rejected");
    // in_progress, done, open: ops.update (the second in_progress was the status it had: nothing); → rejected: ops.reject.
    const same = await patch(filed.number, { status: "rejected" });
    expect(same.status).toBe(200);
    expect((await audits("ops.update")).length - updatesBefore).toBe(3);
    expect((await audits("ops.reject")).filter((a) => a.subjectId === filed.id)).toHaveLength(1);
  });

  test("reject: pending or open only; PATCH pending → rejected is ops.reject too; rejected items emit nothing", async () => {
    const filed = await intake("feature-request", { title: "Teleportation" });
    const approvalsBefore = (await events("ticket.approved")).length;
    const r = await act(filed.body.number, "reject");
    expect(r.body).toMatchObject({ status: "rejected" });
    const { body: done } = await create({ type: "bug", title: "Already fixed" });
    expect((await patch(done.number, { status: "done" })).status).toBe(200);
    const refused = await act(done.number, "reject");
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe("status: from done an item goes to open");
    const other = await intake("bug", { title: "Rejected by PATCH" });
    expect((await patch(other.body.number, { status: "rejected" })).body.status).toBe("rejected");
    expect((await audits("ops.reject")).some((a) => a.subjectId === other.body.id)).toBe(true);
    expect((await events("ticket.approved")).length).toBe(approvalsBefore);
    // PATCH pending → open is an approval.
    const viaPatch = await intake("bug", { title: "Approved by PATCH" });
    expect((await patch(viaPatch.body.number, { status: "open", priority: "low" })).body).toMatchObject({ status: "open", priority: "low" });
    expect((await events("ticket.approved")).map((e) => e.payload.item.number)).toContain(viaPatch.body.number);
    expect((await audits("ops.approve")).find((a) => a.subjectId === viaPatch.body.id)!.detail).toMatchObject({ fields: ["priority", "status"] });
  });

  test("PATCH edits the title, priority and text fields (null or blank clears); audited with before and after", async () => {
    const { body: filed } = await create({ type: "bug", title: "Typo in heading", actualResult: "Teh" });
    const r = await patch(filed.id, { title: "Typo in the heading", priority: "nice_to_have", actualResult: null, expectedResult: "The", useCase: "Looks sloppy" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: "Typo in the heading", priority: "nice_to_have", actualResult: null, expectedResult: "The", useCase: "Looks sloppy", status: "open" });
    const audit = (await audits("ops.update")).find((a) => a.subjectId === filed.id)!;
    expect(audit.detail).toEqual({
      number: filed.number,
      fields: ["title", "priority", "actualResult", "expectedResult", "useCase"],
      before: { title: "Typo in heading", priority: "medium", actualResult: "Teh", expectedResult: null, useCase: null },
      after: { title: "Typo in the heading", priority: "nice_to_have", actualResult: null, expectedResult: "The", useCase: "Looks sloppy" },
    });
    for (const [body, detail] of [
      [{ title: "" }, /^title: /],
      [{ priority: "p1" }, /^priority: /],
      [{ status: "closed" }, /^status: /],
      [{ type: "feature_request" }, /^type: is not a field/],
      [{ number: 3 }, /^number: is not a field/],
    ] as [unknown, RegExp][]) {
      const bad = await patch(filed.id, body);
      expect([JSON.stringify(body), bad.status, bad.body.code]).toEqual([JSON.stringify(body), 400, "VALIDATION"]);
      expect(bad.body.detail).toMatch(detail);
    }
    expect((await patch("fb_missing", { title: "x" })).status).toBe(404);
  });

  test("concurrent approvals of one item: one approval, one ticket.approved", async () => {
    const filed = await intake("feature-request", { title: "Approved twice at once" });
    const results = await Promise.all(Array.from({ length: 8 }, () => act(filed.body.number, "approve")));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    expect((await events("ticket.approved")).filter((e) => e.payload.item.number === filed.body.number)).toHaveLength(1);
  });
});

describe("items the platform files", () => {
  const report = (message: string, type = "PaymentError") =>
    ts.api("/api/sdk/v1/errors", { key: ts.serverKey, body: { errors: [{ message, type, stack: `${type}: ${message}\n    at charge (/srv/app/pay.js:10:5)` }] } });
  const itemOf = async (sourceRef: string) => ((await ts.api("/api/admin/ops?type=error")).body as { sourceRef: string }[]).filter((i) => i.sourceRef === sourceRef);

  test("a new tracked error files one open error item; more occurrences file nothing; a regression counts it, or reopens it when done", async () => {
    const bugsBefore = (await events("bug.created")).length;
    expect((await report("Card declined for order 1")).status).toBe(202);
    const [error] = (await ts.api("/api/admin/errors")).body as { id: string; fingerprint: string }[];
    let [item] = (await itemOf(error!.id)) as any[];
    expect(item).toMatchObject({ type: "error", status: "open", priority: "high", source: "platform", sourceRef: error!.id, reportedBy: "system@svc.local", timesFiled: 1 });
    expect(item.title).toMatch(/^PaymentError: Card declined/);
    expect(item.actualResult).toContain(`fingerprint ${error!.fingerprint}`);
    expect((await audits("ops.create")).find((a) => a.subjectId === item.id)).toMatchObject({ actorEmail: "system@svc.local", actorType: "system" });

    // Still unresolved: more occurrences file nothing.
    expect((await report("Card declined for order 2")).status).toBe(202);
    expect(await itemOf(error!.id)).toHaveLength(1);

    // Resolved, then it happens again: regressed, and the open item is counted.
    expect((await ts.api(`/api/admin/errors/${error!.id}`, { method: "PATCH", body: { status: "resolved" } })).status).toBe(200);
    expect((await report("Card declined for order 3")).status).toBe(202);
    expect((await ts.api(`/api/admin/errors/${error!.id}`)).body.status).toBe("regressed");
    [item] = (await itemOf(error!.id)) as any[];
    expect(item).toMatchObject({ status: "open", timesFiled: 2 });
    expect((await audits("ops.recur")).filter((a) => a.subjectId === item.id)).toHaveLength(1);

    // The item is done and the error resolved; it regresses: the same item is reopened.
    expect((await patch(item.id, { status: "done" })).status).toBe(200);
    expect((await ts.api(`/api/admin/errors/${error!.id}`, { method: "PATCH", body: { status: "resolved" } })).status).toBe(200);
    expect((await report("Card declined for order 4")).status).toBe(202);
    const items = await itemOf(error!.id);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ id: item.id, status: "open", timesFiled: 3, statusChangedBy: "system@svc.local" });
    expect((await audits("ops.reopen")).filter((a) => a.subjectId === item.id)).toHaveLength(1);

    // Rejected: counted on regression, left rejected.
    expect((await patch(item.id, { status: "rejected" })).status).toBe(200);
    expect((await ts.api(`/api/admin/errors/${error!.id}`, { method: "PATCH", body: { status: "resolved" } })).status).toBe(200);
    expect((await report("Card declined for order 5")).status).toBe(202);
    expect((await itemOf(error!.id))[0]).toMatchObject({ status: "rejected", timesFiled: 4 });

    // Error items emit none of the ops events (error.new and error.regressed are the errors module's).
    expect((await events("bug.created")).length).toBe(bugsBefore);
  });

  test("one batch with several new errors files one item each, numbered in turn", async () => {
    const before = (await numbers()).length;
    const r = await ts.api("/api/sdk/v1/errors", {
      key: ts.serverKey,
      body: { errors: ["A", "B", "C"].map((t) => ({ message: `boom ${t}`, type: `${t}Error`, fingerprint: `batch-${t}` })) },
    });
    expect(r.status).toBe(202);
    expect(await numbers()).toEqual(consecutive(before + 3));
    const titles = ((await ts.api("/api/admin/ops?type=error")).body as { title: string }[]).map((i) => i.title);
    for (const t of ["A", "B", "C"]) expect(titles).toContain(`${t}Error: boom ${t}`);
  });

  test("concurrent reports of one new error file one item", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => report("Unique concurrent failure", "RaceError")));
    expect(results.every((r) => r.status === 202)).toBe(true);
    const items = ((await ts.api("/api/admin/ops?type=error&q=Unique%20concurrent")).body as unknown[]).length;
    expect(items).toBe(1);
  });

  test("a firing alert rule files one open alert item; firing again after it resolved counts it", async () => {
    const B = Math.floor(Date.now() / 60_000) * 60 - 4 * 3600;
    const ms = (s: number) => (B + s) * 1000;
    expect((await ts.api("/api/admin/events", { body: { name: "job.failed" } })).status).toBe(201);
    const metric = await ts.api("/api/admin/metrics", { body: { name: "job-failures", kind: "count", event: "job.failed" } });
    expect(metric.status).toBe(201);
    const rule = await ts.api("/api/admin/alert-rules", { body: { name: "failing-jobs", metricId: metric.body.id, threshold: 2, comparator: "gt", windowHours: 1 } });
    expect(rule.status).toBe(201);
    const ingest = (at: number[]) => ts.api("/api/sdk/v1/events", { key: ts.serverKey, body: { events: at.map((s, i) => ({ name: "job.failed", unitId: `u${i}`, ts: ms(s) })) } });
    expect((await ingest([10, 20, 30])).status).toBe(202);
    const evaluate = (s: number) => ts.server.ctx.services.alerts.evaluateDue(ms(s));
    expect((await evaluate(60)).transitions.map((t) => t.kind)).toEqual(["fire"]);
    const items = async () => ((await ts.api("/api/admin/ops?type=alert")).body as any[]).filter((i) => i.sourceRef === rule.body.id);
    let [item] = await items();
    expect(item).toMatchObject({ type: "alert", status: "open", priority: "high", source: "platform", title: "Alert failing-jobs firing", timesFiled: 1 });
    expect(item.actualResult).toContain(`Metric ${metric.body.id} was 3`);
    expect(item.actualResult).toContain("> 2");
    // Still firing: nothing more.
    await evaluate(120);
    expect(await items()).toHaveLength(1);
    // Resolves (the window moves past the events), then fires again: the same item, counted.
    expect((await evaluate(2 * 3600)).transitions.map((t) => t.kind)).toEqual(["resolve"]);
    expect((await ingest([2 * 3600 + 10, 2 * 3600 + 20, 2 * 3600 + 30])).status).toBe(202);
    expect((await evaluate(2 * 3600 + 60)).transitions.map((t) => t.kind)).toEqual(["fire"]);
    [item] = await items();
    expect(await items()).toHaveLength(1);
    expect(item).toMatchObject({ status: "open", timesFiled: 2 });
  });
});

describe("OpenAPI", () => {
  test("the transitions, the priorities and the events are documented", async () => {
    const spec = (await ts.api("/openapi/json", { key: null })).body;
    const patchOp = spec.paths["/api/admin/ops/{id}"].patch;
    expect(patchOp.description).toContain("`pending_approval` (public intake) → `open`");
    expect(patchOp.description).toContain("`rejected` is final");
    const create = spec.paths["/api/admin/ops"].post;
    expect(create.description).toContain("ticket.approved");
    expect(create.responses["201"]).toBeDefined();
    expect(spec.paths["/api/admin/ops/{id}/approve"].post.summary).toMatch(/Approve/);
    const intakeOp = spec.paths["/ops/feature-request"].post;
    expect(intakeOp.security).toEqual([{ sdkKey: [] }]);
    expect(Object.keys(intakeOp.responses)).toEqual(expect.arrayContaining(["200", "201", "401", "403", "413", "429", "503"]));
  });
});
