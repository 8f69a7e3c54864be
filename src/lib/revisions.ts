import { ENVS, type Env } from "./envs";
import { nowIso } from "./ids";
import type { Migration, Queryable, Tx } from "./store";

/**
 * Per project and env, a counter every publish bumps: the snapshot ETag and
 * the stream event id. Modules that publish what SDKs see call
 * `bumpRevision` inside their publishing transaction; every server hears it
 * on the `revisions` channel once the transaction has committed.
 */
export const REVISIONS_CHANNEL = "revisions";

export const REVISIONS_MIGRATIONS: Migration[] = [
  {
    name: "env_revisions",
    sqlite: `
CREATE TABLE env_revisions (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  env TEXT NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  revision INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project_id, env)
) STRICT, WITHOUT ROWID;
`,
    postgres: `
CREATE TABLE env_revisions (
  project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  env text NOT NULL CHECK (env IN ('dev', 'staging', 'prod')),
  revision integer NOT NULL,
  updated_at text NOT NULL,
  PRIMARY KEY (project_id, env)
);
`,
  },
];

/** `publishedAt` (epoch ms, when the revision was bumped) times the publish-to-stream delay in /metrics. */
export type RevisionChange = { projectId: string; env: Env; revision: number; publishedAt?: number };

export function encodeRevisionChange(c: RevisionChange): string {
  // The time is a fourth field: a server that reads only three still understands the payload.
  return `${c.projectId}/${c.env}/${c.revision}${c.publishedAt === undefined ? "" : `/${c.publishedAt}`}`;
}

export function decodeRevisionChange(payload: string): RevisionChange | null {
  const [projectId, env, revision, publishedAt] = payload.split("/");
  if (!projectId || !env || !revision) return null;
  const at = Number(publishedAt);
  return { projectId, env: env as Env, revision: Number(revision), ...(publishedAt && Number.isFinite(at) ? { publishedAt: at } : {}) };
}

/** Bumps the env's revision inside the publishing transaction and announces it with the commit. */
export async function bumpRevision(tx: Tx, projectId: string, env: Env): Promise<number> {
  const row = await tx.one<{ revision: number }>(
    `INSERT INTO env_revisions (project_id, env, revision, updated_at) VALUES (?1, ?2, 1, ?3)
     ON CONFLICT (project_id, env) DO UPDATE SET revision = env_revisions.revision + 1, updated_at = ?3
     RETURNING revision`,
    projectId,
    env,
    nowIso(),
  );
  const revision = Number(row!.revision);
  tx.announce(REVISIONS_CHANNEL, encodeRevisionChange({ projectId, env, revision, publishedAt: Date.now() }));
  return revision;
}

/** Moves every env's revision: for what every env publishes alike (universes, translations) and for deletes. */
export async function bumpEveryEnv(tx: Tx, projectId: string): Promise<void> {
  for (const env of ENVS) await bumpRevision(tx, projectId, env);
}

/** Current revision (0 before the first publish). */
export async function currentRevision(store: Queryable, projectId: string, env: Env): Promise<number> {
  const row = await store.one<{ revision: number }>("SELECT revision FROM env_revisions WHERE project_id = ? AND env = ?", projectId, env);
  return row ? Number(row.revision) : 0;
}

export async function allRevisions(store: Queryable): Promise<RevisionChange[]> {
  const rows = await store.all<{ project_id: string; env: Env; revision: number }>("SELECT project_id, env, revision FROM env_revisions");
  return rows.map((r) => ({ projectId: r.project_id, env: r.env, revision: Number(r.revision) }));
}
