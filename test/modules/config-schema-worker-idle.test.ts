import { afterEach, describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/lib/ids";
import { SchemaChecker, WORKER_IDLE_MS } from "../../src/modules/configs/schema-checker";

/**
 * Issue 32: the schema worker (a whole JavaScript VM with ajv, ~16 MB resident) was the largest thing an idle
 * server kept after its first config write. It now ends WORKER_IDLE_MS after its last check, and the next check
 * starts a fresh one that answers the same.
 */
const schema = JSON.stringify({ type: "object", properties: { limit: { type: "integer", minimum: 1 } }, required: ["limit"] });
const check = (value: unknown) => ({ key: "cfg_idle", schema, hash: sha256Hex(schema), values: [{ value, label: "value" }] });

let checker: SchemaChecker | undefined;
afterEach(() => checker?.close());

describe("the config schema worker", () => {
  test("stays up for ten seconds after its last check by default", () => {
    expect(WORKER_IDLE_MS).toBe(10_000);
  });

  test("ends once idle, and the next check starts a fresh worker that answers the same", async () => {
    checker = new SchemaChecker({ idleMs: 200 });
    expect(checker.workerRunning).toBe(false);
    expect(await checker.check(check({ limit: 5 }))).toEqual([]);
    expect(checker.workerRunning).toBe(true);
    await Bun.sleep(500);
    expect(checker.workerRunning).toBe(false);

    const problems = await checker.check(check({ limit: 0 }));
    expect(problems.length).toBe(1);
    expect(problems[0]).toStartWith("value");
    expect(checker.workerRunning).toBe(true);
  });

  test("a check inside the idle window keeps the worker, and the window starts again from it", async () => {
    checker = new SchemaChecker({ idleMs: 400 });
    await checker.check(check({ limit: 1 }));
    await Bun.sleep(250);
    await checker.check(check({ limit: 2 }));
    await Bun.sleep(250);
    expect(checker.workerRunning).toBe(true);
    await Bun.sleep(400);
    expect(checker.workerRunning).toBe(false);
  });
});
