import type { Env } from "../../lib/envs";
import { COUNTER_ENTRIES_MAX, type CountRow, utcDay } from "./types";

type Entry = { count: number; lastAt: number };

/**
 * Evaluation counts held in memory between flushes. The hot path (every OFREP answer, GrowthBook remote
 * evaluation, an SDK batch) adds to a map per (project, env), keyed by flag name: two Map lookups and an
 * addition, no allocation once a name is known. `take()` hands everything over as rows (the day is the
 * UTC day of the last evaluation) and starts afresh. Shared by the server (rows go to the store) and the
 * edge relay (rows go upstream as SDK batches).
 */
export class EvaluationCounter {
  private scopes = new Map<string, { projectId: string; env: Env; names: Map<string, Entry> }>();
  private entries = 0;
  /** Evaluations not held because the map was full (a backstop: names come from snapshots). */
  dropped = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds `n` evaluations of each name (already known to be flags of the project's env). */
  add(projectId: string, env: Env, names: string | readonly string[], n = 1): void {
    const key = projectId + env;
    let scope = this.scopes.get(key);
    if (!scope) this.scopes.set(key, (scope = { projectId, env, names: new Map() }));
    const at = this.now();
    if (typeof names === "string") this.hit(scope.names, names, n, at);
    else for (const name of names) this.hit(scope.names, name, n, at);
  }

  private hit(names: Map<string, Entry>, name: string, n: number, at: number): void {
    const entry = names.get(name);
    if (entry) {
      entry.count += n;
      entry.lastAt = at;
    } else if (this.entries < COUNTER_ENTRIES_MAX) {
      names.set(name, { count: n, lastAt: at });
      this.entries++;
    } else this.dropped += n;
  }

  get size(): number {
    return this.entries;
  }

  /** Everything counted since the last call, as rows; the counter starts empty. */
  take(): CountRow[] {
    const rows: CountRow[] = [];
    for (const { projectId, env, names } of this.scopes.values()) {
      for (const [flag, e] of names) rows.push({ projectId, flag, env, day: utcDay(e.lastAt), count: e.count, lastAt: new Date(e.lastAt).toISOString() });
    }
    this.scopes = new Map();
    this.entries = 0;
    return rows;
  }

  /** Puts rows back (a flush that failed for a passing reason): they are written with the next. */
  restore(rows: readonly CountRow[]): void {
    for (const r of rows) this.add(r.projectId, r.env, r.flag, r.count);
  }
}
