import { readFileSync, readdirSync } from "node:fs";

/** The process ids of `pid`'s children (Linux /proc; every thread's, as a child may be started from any of them). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // The process has ended.
  }
  return out;
}

/** Whether a process of this id is there and not a zombie. */
export function running(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Waits until `pid` is gone (true) or `withinMs` passes (false). */
export async function ended(pid: number, withinMs = 3000): Promise<boolean> {
  for (const until = Date.now() + withinMs; Date.now() < until; await Bun.sleep(25)) if (!running(pid)) return true;
  return !running(pid);
}
