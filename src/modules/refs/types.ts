/** Limits and rows of code references, shared by the service, the store, the contract and the scanner. */

/** Most references one push carries: a 1 MiB body holds about this many (about 100 bytes each). */
export const PUSH_MAX_REFS = 10_000;
/** Most repositories a project keeps references of. */
export const REPOS_MAX = 200;
/** Most references GET /api/admin/refs?flag= lists (the per-repo counts are always whole). */
export const LIST_MAX_REFS = 1000;
export const FLAG_MAX = 128;
export const FILE_MAX = 1024;
export const REPO_MAX = 200;
export const BRANCH_MAX = 255;
export const COMMIT_MAX = 64;
export const LINE_MAX = 10_000_000;

export const REF_KINDS = ["sdk", "string"] as const;
export type RefKind = (typeof REF_KINDS)[number];

export type RefRow = { flag: string; repo: string; branch: string | null; commit_sha: string; file: string; line: number; kind: RefKind; pushed_at: string };
export type RepoRow = { repo: string; branch: string | null; commit_sha: string; ref_count: number; flag_count: number; pushed_at: string; pushed_by: string };
