import { useEffect, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { configApi } from "./client";

export type Check = { state: "checking" } | { state: "valid" } | { state: "invalid"; problems: string[] };

/**
 * Checks an editor's text as the person types: JSON first (here), then the server's schema check (the one validator).
 * With `enabled` false (a value as it was stored, already checked when saved) it asks nothing: a page of many rules
 * does not send one check per value when it opens.
 */
export function useValueCheck(name: string, text: string, enabled = true): Check {
  const [check, setCheck] = useState<Check>({ state: "checking" });
  useEffect(() => {
    if (!enabled) {
      setCheck({ state: "valid" });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      setCheck({ state: "invalid", problems: [`Not valid JSON: ${(err as Error).message}`] });
      return;
    }
    setCheck({ state: "checking" });
    let cancelled = false;
    const timer = setTimeout(async () => {
      try {
        const result = await call(configApi.api.admin.configs({ id: name }).check.post({ value }));
        if (!cancelled) setCheck(result.valid ? { state: "valid" } : { state: "invalid", problems: result.problems });
      } catch (err) {
        if (!cancelled) setCheck({ state: "invalid", problems: [describeError(err)] });
      }
    }, 200);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [name, text, enabled]);
  return check;
}
