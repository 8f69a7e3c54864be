import type { Queryable } from "../../lib/store";
import type { RefKind, RefRow, RepoRow } from "./types";

export type NewRef = { flag: string; file: string; line: number; kind: RefKind };

/** Rows per INSERT: 500 × 6 parameters stays under both engines' parameter limits. */
const BATCH = 500;

export async function repoOf(q: Queryable, projectId: string, repo: string): Promise<RepoRow | undefined> {
  return q.one<RepoRow>("SELECT repo, branch, commit_sha, ref_count, flag_count, pushed_at, pushed_by FROM code_ref_repos WHERE project_id = ? AND repo = ?", projectId, repo);
}

export async function reposOf(q: Queryable, projectId: string): Promise<RepoRow[]> {
  return q.all<RepoRow>("SELECT repo, branch, commit_sha, ref_count, flag_count, pushed_at, pushed_by FROM code_ref_repos WHERE project_id = ? ORDER BY repo", projectId);
}

export async function repoCount(q: Queryable, projectId: string): Promise<number> {
  return Number((await q.one<{ n: number }>("SELECT COUNT(*) AS n FROM code_ref_repos WHERE project_id = ?", projectId))?.n ?? 0);
}

/** The repository's row and all its references, replacing what an earlier push left (in the caller's transaction). */
export async function replaceRepo(q: Queryable, projectId: string, repo: RepoRow, refs: readonly NewRef[]): Promise<void> {
  await q.run("DELETE FROM code_refs WHERE project_id = ? AND repo = ?", projectId, repo.repo);
  await q.run(
    `INSERT INTO code_ref_repos (project_id, repo, branch, commit_sha, ref_count, flag_count, pushed_at, pushed_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, repo) DO UPDATE SET branch = excluded.branch, commit_sha = excluded.commit_sha, ref_count = excluded.ref_count,
       flag_count = excluded.flag_count, pushed_at = excluded.pushed_at, pushed_by = excluded.pushed_by`,
    projectId,
    repo.repo,
    repo.branch,
    repo.commit_sha,
    repo.ref_count,
    repo.flag_count,
    repo.pushed_at,
    repo.pushed_by,
  );
  for (let i = 0; i < refs.length; i += BATCH) {
    const chunk = refs.slice(i, i + BATCH);
    const params = chunk.flatMap((r) => [projectId, repo.repo, r.flag, r.file, r.line, r.kind]);
    await q.run(`INSERT INTO code_refs (project_id, repo, flag, file, line, kind) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}`, ...params);
  }
}

/** Removes a repository and (by cascade, and explicitly for clarity) its references; answers whether it existed. */
export async function deleteRepo(q: Queryable, projectId: string, repo: string): Promise<boolean> {
  await q.run("DELETE FROM code_refs WHERE project_id = ? AND repo = ?", projectId, repo);
  return (await q.run("DELETE FROM code_ref_repos WHERE project_id = ? AND repo = ?", projectId, repo)) > 0;
}

/** One flag's references (null: every flag's), by repository, file and line, at most `limit`. */
export async function refsOfFlag(q: Queryable, projectId: string, flag: string | null, limit: number): Promise<RefRow[]> {
  return q.all<RefRow>(
    `SELECT r.flag, r.repo, p.branch, p.commit_sha, r.file, r.line, r.kind, p.pushed_at
       FROM code_refs r JOIN code_ref_repos p ON p.project_id = r.project_id AND p.repo = r.repo
      WHERE r.project_id = ?${flag === null ? "" : " AND r.flag = ?"}
      ORDER BY r.repo, r.file, r.line, r.flag, r.kind LIMIT ?`,
    ...(flag === null ? [projectId, limit] : [projectId, flag, limit]),
  );
}

/** Per repository: how many references of the flag (null: of every flag) it has. */
export async function countsOfFlag(q: Queryable, projectId: string, flag: string | null): Promise<{ repo: string; n: number }[]> {
  const where = flag === null ? "project_id = ?" : "project_id = ? AND flag = ?";
  return q.all<{ repo: string; n: number }>(`SELECT repo, COUNT(*) AS n FROM code_refs WHERE ${where} GROUP BY repo ORDER BY repo`, ...(flag === null ? [projectId] : [projectId, flag]));
}
