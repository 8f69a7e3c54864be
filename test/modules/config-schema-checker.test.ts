import { afterEach, describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/lib/ids";
import { CHECKER_IDLE_MS, SchemaChecker } from "../../src/modules/configs/schema-checker";
import { ended, running } from "../support/children";

/**
 * Issue 32: the config schema checker (a whole JavaScript VM with ajv) was the largest thing an idle server kept
 * after its first config write. It ends CHECKER_IDLE_MS after its last check, and the next check starts a fresh
 * one that answers the same. It is a child process, so that what it ran leaves with it (a worker thread's code
 * pages stayed mapped in the server: about 4.5 MB of its RSS on dist/svc).
 */
const schema = JSON.stringify({ type: "object", properties: { limit: { type: "integer", minimum: 1 } }, required: ["limit"] });
const check = (value: unknown) => ({ key: "cfg_idle", schema, hash: sha256Hex(schema), values: [{ value, label: "value" }] });

let checker: SchemaChecker | undefined;
afterEach(() => checker?.close());

describe("the config schema checker", () => {
  test("stays up for ten seconds after its last check by default", () => {
    expect(CHECKER_IDLE_MS).toBe(10_000);
  });

  test("checks in a child process of its own, which ends once idle; the next check starts a fresh one that answers the same", async () => {
    checker = new SchemaChecker({ idleMs: 200 });
    expect(checker.childPid).toBeUndefined();
    expect(await checker.check(check({ limit: 5 }))).toEqual([]);
    const first = checker.childPid!;
    expect(first).toBeGreaterThan(0);
    expect(first).not.toBe(process.pid);
    expect(running(first)).toBe(true);
    await Bun.sleep(500);
    expect(checker.childPid).toBeUndefined();
    expect(await ended(first)).toBe(true);

    const problems = await checker.check(check({ limit: 0 }));
    expect(problems).toEqual(["value /limit: must be >= 1"]);
    expect(checker.childPid).toBeGreaterThan(0);
    expect(checker.childPid).not.toBe(first);
  });

  test("a check inside the idle window keeps the child, and the window starts again from it", async () => {
    checker = new SchemaChecker({ idleMs: 1500 });
    await checker.check(check({ limit: 1 }));
    const pid = checker.childPid;
    await Bun.sleep(1000);
    await checker.check(check({ limit: 2 }));
    expect(checker.childPid).toBe(pid!);
    await Bun.sleep(1000);
    // 2 s after the first check, 1 s after the second: still up.
    expect(checker.childPid).toBe(pid!);
    await Bun.sleep(1500);
    expect(checker.childPid).toBeUndefined();
  });

  test("a child that never says it is ready is killed after the start budget, and the checks waiting for it are refused (503)", async () => {
    const silent = { cmd: [process.execPath, "-e", "process.on('message', () => {}); setInterval(() => {}, 1000)"], env: { ...process.env } };
    checker = new SchemaChecker({ startBudgetMs: 300, command: () => silent });
    const started = Date.now();
    const refused = await checker.check(check({ limit: 1 })).catch((err: unknown) => err as { code?: string });
    expect(refused).toMatchObject({ code: "UNAVAILABLE" });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(checker.childPid).toBeUndefined();
  });

  test("a child that dies under a check: that check is VALIDATION, the next one works in a fresh child", async () => {
    checker = new SchemaChecker({ idleMs: 5000 });
    await checker.check(check({ limit: 1 }));
    const pid = checker.childPid!;
    // Slow enough to be running when the child is killed (see test/config-schema-cost.test.ts).
    const slowSchema = JSON.stringify({ type: "string", pattern: "(?:a|b|c|d|e|f|g|h|i|j){1,1000}[^a-j]" });
    const slow = checker.check({ key: "cfg_slow", schema: slowSchema, hash: sha256Hex(slowSchema), values: [{ value: "a".repeat(200_000), label: "value" }] });
    await Bun.sleep(300);
    process.kill(pid, "SIGKILL");
    const error = await slow.then(
      () => undefined,
      (err: unknown) => err as { code?: string; message?: string },
    );
    expect(error).toMatchObject({ code: "VALIDATION", message: "The value could not be checked against the config's schema" });
    expect(await checker.check(check({ limit: 0 }))).toEqual(["value /limit: must be >= 1"]);
    expect(checker.childPid).not.toBe(pid);
  });

  test("Ctrl-C or systemctl stop (SIGINT, SIGTERM to the server's process group) do not end the child: checks go on until the server ends it", async () => {
    checker = new SchemaChecker({ idleMs: 5000 });
    await checker.check(check({ limit: 1 }));
    const pid = checker.childPid!;
    process.kill(pid, "SIGINT");
    process.kill(pid, "SIGTERM");
    await Bun.sleep(300);
    expect(running(pid)).toBe(true);
    expect(await checker.check(check({ limit: 0 }))).toEqual(["value /limit: must be >= 1"]);
    expect(checker.childPid).toBe(pid);
  });

  test("close() ends the child at once, and later checks are refused (503)", async () => {
    checker = new SchemaChecker({ idleMs: 5000 });
    await checker.check(check({ limit: 1 }));
    const pid = checker.childPid!;
    checker.close();
    expect(await ended(pid)).toBe(true);
    const refused = await checker.check(check({ limit: 1 })).catch((err: unknown) => err as { status?: number; code?: string });
    expect(refused).toMatchObject({ code: "UNAVAILABLE" });
  });
});
