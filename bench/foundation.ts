/** Foundation figures: an authenticated admin GET and /healthz against a bare Bun.serve answering the same bytes. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Row, type Settings, type Target, initProject, load, rssMb, startBare, startSvc, stop } from "./lib";

export async function runFoundation(settings: Settings): Promise<{ rows: Row[]; figures: Record<string, number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-"));
  const targets: Target[] = [];
  try {
    const keys = initProject(settings, dataDir);
    const svc = await startSvc(settings, dataDir);
    targets.push(svc);
    const admin = { authorization: `Bearer ${keys.adminKey}` };
    const sample = await fetch(`${svc.url}/api/admin/projects/current`, { headers: admin });
    if (sample.status !== 200) throw new Error(`svc answered ${sample.status} to the authenticated route`);
    const body = await sample.text();
    const bare = await startBare(body);
    targets.push(bare);

    const rows: Row[] = [];
    for (const [name, request] of [
      [`bare Bun.serve, same ${body.length}-byte JSON`, { url: `${bare.url}/` }],
      ["svc GET /healthz", { url: `${svc.url}/healthz` }],
      ["svc GET /api/admin/projects/current (admin key)", { url: `${svc.url}/api/admin/projects/current`, headers: admin }],
    ] as const) {
      rows.push(await load(settings, name, request));
      console.log(`  done: ${name}`);
    }
    return { rows, figures: { adminGetVsBare: rows[2]!.requestsPerSec! / rows[0]!.requestsPerSec!, rssAfterMb: rssMb(svc.proc.pid) } };
  } finally {
    await stop(targets);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
