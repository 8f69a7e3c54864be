import { describe, expect, test } from "bun:test";
import { versionDiff } from "../../src/modules/configs/dashboard/history-diff";

// The config history's "Changes" column (issue 29: the history shows the diff of value and rules).
describe("versionDiff", () => {
  const v = (version: number, value: unknown, rules: { name?: string; value?: unknown }[] = []) => ({ version, value, rules });
  test("names the value change and the rules added, removed and changed", () => {
    expect(versionDiff(undefined, v(1, 60))).toBe("first version");
    expect(versionDiff(v(1, 60), v(2, 120))).toBe("value 60 → 120");
    expect(versionDiff(v(2, 120), v(3, 120, [{ name: "pro", value: 600 }, { value: 5 }]))).toBe("rules added: pro, rule-2");
    expect(versionDiff(v(3, 120, [{ name: "pro", value: 600 }, { value: 5 }]), v(4, 90, [{ name: "pro", value: 700 }]))).toBe("value 120 → 90; rules removed: rule-2; rules changed: pro");
    expect(versionDiff(v(4, 90), v(5, 90))).toBe("same as before (republished)");
  });
});
