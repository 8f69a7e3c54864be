import { recordAudit } from "../../lib/audit";
import { notFound, validation } from "../../lib/errors";
import { nowIso } from "../../lib/ids";
import type { ServiceContext } from "../../lib/module";
import { NAME_UNSAFE_CHARS } from "../../lib/validate";
import { type NewRef, countsOfFlag, deleteRepo, refsOfFlag, replaceRepo, repoCount, repoOf, reposOf } from "./store";
import { LIST_MAX_REFS, PUSH_MAX_REFS, REPOS_MAX, type RefKind, type RepoRow } from "./types";

export type PushInput = { repo: string; branch?: string | null; commit: string; refs: readonly NewRef[] };
export type Repo = { repo: string; branch: string | null; commit: string; refs: number; flags: number; pushedAt: string; pushedBy: string };
export type FlagRef = { flag: string; repo: string; branch: string | null; commit: string; file: string; line: number; kind: RefKind; pushedAt: string };
export type FlagRefs = { flag: string | null; total: number; truncated: boolean; repos: { repo: string; commit: string; branch: string | null; pushedAt: string; count: number }[]; reposPushed: number; refs: FlagRef[] };

const toRepo = (r: RepoRow): Repo => ({ repo: r.repo, branch: r.branch, commit: r.commit_sha, refs: Number(r.ref_count), flags: Number(r.flag_count), pushedAt: r.pushed_at, pushedBy: r.pushed_by });

/** Text from someone's files: control, bidi and invisible characters are refused so that what is shown is what is stored. */
function checkText(field: string, value: string): void {
  if (NAME_UNSAFE_CHARS.test(value)) throw validation(`${field} must not contain control or invisible characters`, `${field}: control, bidi and invisible characters are not allowed`);
}

/**
 * Where flags are used in code: `svc refs push` replaces one repository's references (flag, file,
 * line, kind) with a scan of one commit. Nothing here reads the files; the names are stored and
 * shown as text. A flag with no references in any pushed repository that is also stale is safe to
 * delete (isSafeToDelete).
 */
export class RefsService {
  constructor(private readonly ctx: ServiceContext) {}

  async push(projectId: string, input: PushInput, actor: { email: string; type: string }): Promise<Repo> {
    checkText("repo", input.repo);
    if (input.repo.trim() !== input.repo || input.repo === "") throw validation("repo must not start or end with spaces", "repo: a name such as github.com/acme/shop");
    if (input.branch) checkText("branch", input.branch);
    if (input.refs.length > PUSH_MAX_REFS) throw validation(`At most ${PUSH_MAX_REFS} references per push`, `refs: ${input.refs.length} given`);
    // The same place twice is one reference.
    const seen = new Set<string>();
    const refs: NewRef[] = [];
    input.refs.forEach((r, i) => {
      checkText(`refs[${i}].flag`, r.flag);
      checkText(`refs[${i}].file`, r.file);
      const key = JSON.stringify([r.flag, r.file, r.line, r.kind]);
      if (seen.has(key)) return;
      seen.add(key);
      refs.push({ flag: r.flag, file: r.file, line: r.line, kind: r.kind });
    });
    const row: RepoRow = {
      repo: input.repo,
      branch: input.branch ?? null,
      commit_sha: input.commit,
      ref_count: refs.length,
      flag_count: new Set(refs.map((r) => r.flag)).size,
      pushed_at: nowIso(),
      pushed_by: actor.email,
    };
    return this.ctx.store.write(async (tx) => {
      await tx.lock(`refs:${projectId}`);
      const earlier = await repoOf(tx, projectId, input.repo);
      if (!earlier && (await repoCount(tx, projectId)) >= REPOS_MAX) {
        throw validation(`A project keeps references of at most ${REPOS_MAX} repositories`, "repo: delete one with `svc refs forget NAME` first");
      }
      await replaceRepo(tx, projectId, row, refs);
      await recordAudit(tx, {
        projectId,
        action: "refs.push",
        subjectName: row.repo,
        actor,
        detail: { commit: row.commit_sha, branch: row.branch, refs: row.ref_count, flags: row.flag_count, previousCommit: earlier?.commit_sha ?? null },
      });
      return toRepo(row);
    });
  }

  async repos(projectId: string): Promise<Repo[]> {
    return (await reposOf(this.ctx.store, projectId)).map(toRepo);
  }

  async deleteRepo(projectId: string, repo: string, actor: { email: string; type: string }): Promise<void> {
    await this.ctx.store.write(async (tx) => {
      await tx.lock(`refs:${projectId}`);
      const earlier = await repoOf(tx, projectId, repo);
      if (!earlier || !(await deleteRepo(tx, projectId, repo))) throw notFound(`No references of a repository named ${repo}`, "repo: `svc refs repos` lists them");
      await recordAudit(tx, { projectId, action: "refs.delete", subjectName: repo, actor, detail: { commit: earlier.commit_sha, refs: Number(earlier.ref_count) } });
    });
  }

  /** A flag's references (null: every flag's) in every pushed repository (at most LIST_MAX_REFS of them; the counts are whole). */
  async ofFlag(projectId: string, flag: string | null): Promise<FlagRefs> {
    const [rows, counts, repos] = await Promise.all([refsOfFlag(this.ctx.store, projectId, flag, LIST_MAX_REFS), countsOfFlag(this.ctx.store, projectId, flag), reposOf(this.ctx.store, projectId)]);
    const byName = new Map(repos.map((r) => [r.repo, r]));
    const total = counts.reduce((sum, c) => sum + Number(c.n), 0);
    return {
      flag,
      total,
      truncated: total > rows.length,
      reposPushed: repos.length,
      repos: counts.map((c) => {
        const r = byName.get(c.repo)!;
        return { repo: c.repo, commit: r.commit_sha, branch: r.branch, pushedAt: r.pushed_at, count: Number(c.n) };
      }),
      refs: rows.map((r) => ({ flag: r.flag, repo: r.repo, branch: r.branch, commit: r.commit_sha, file: r.file, line: Number(r.line), kind: r.kind, pushedAt: r.pushed_at })),
    };
  }

  /**
   * Safe to delete: stale (the caller says; the stale-flags service decides that) and no reference
   * in any pushed repository. With no repository pushed at all nothing is known, so never.
   */
  async isSafeToDelete(projectId: string, name: string, isStale: boolean): Promise<boolean> {
    if (!isStale) return false;
    const refs = await this.ofFlag(projectId, name);
    return refs.reposPushed > 0 && refs.total === 0;
  }
}
