import type { Env } from "../../lib/envs";
import type { Queryable, Tx } from "../../lib/store";
import type { CountRow } from "./types";

/**
 * Adds a row's count to its (project, flag, env, day) row in one statement: an INSERT … ON CONFLICT DO UPDATE
 * is atomic on both engines, so servers flushing at once add up and none overwrites another's count.
 */
export async function addCounts(tx: Tx, rows: readonly CountRow[]): Promise<void> {
  for (const r of rows) {
    await tx.run(
      `INSERT INTO flag_evaluations (project_id, flag, env, day, count, last_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, flag, env, day) DO UPDATE SET count = flag_evaluations.count + excluded.count,
         last_at = CASE WHEN excluded.last_at > flag_evaluations.last_at THEN excluded.last_at ELSE flag_evaluations.last_at END`,
      r.projectId,
      r.flag,
      r.env,
      r.day,
      r.count,
      r.lastAt,
    );
  }
}

/** The latest evaluation of every counted flag and env of the project. */
export async function lastEvaluations(q: Queryable, projectId: string): Promise<{ flag: string; env: Env; lastAt: string }[]> {
  const rows = await q.all<{ flag: string; env: Env; last_at: string }>(
    "SELECT flag, env, MAX(last_at) AS last_at FROM flag_evaluations WHERE project_id = ? GROUP BY flag, env",
    projectId,
  );
  return rows.map((r) => ({ flag: r.flag, env: r.env, lastAt: r.last_at }));
}

/** One flag's daily counts from `fromDay` on, per env. */
export async function dailyCounts(q: Queryable, projectId: string, flag: string, fromDay: string): Promise<{ env: Env; day: string; count: number }[]> {
  const rows = await q.all<{ env: Env; day: string; count: number | string }>(
    "SELECT env, day, count FROM flag_evaluations WHERE project_id = ? AND flag = ? AND day >= ? ORDER BY day",
    projectId,
    flag,
    fromDay,
  );
  return rows.map((r) => ({ env: r.env, day: r.day, count: Number(r.count) }));
}

/** Deletes daily rows before `beforeDay`. */
export function pruneCounts(q: Queryable, beforeDay: string): Promise<number> {
  return q.run("DELETE FROM flag_evaluations WHERE day < ?", beforeDay);
}

/**
 * Claims the project's weekly digest: true when no digest was sent since `sentBefore` (and records `now`), in
 * one statement (the conflict update's condition is checked on the row as it is, so two servers cannot both win).
 */
export async function claimDigest(tx: Tx, projectId: string, now: string, sentBefore: string): Promise<boolean> {
  const row = await tx.one<{ project_id: string }>(
    `INSERT INTO stale_digests (project_id, sent_at) VALUES (?, ?)
     ON CONFLICT (project_id) DO UPDATE SET sent_at = excluded.sent_at WHERE stale_digests.sent_at <= ?
     RETURNING project_id`,
    projectId,
    now,
    sentBefore,
  );
  return row !== undefined;
}
