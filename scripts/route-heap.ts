/**
 * Heap after one request to each of N different routes (issue 32, memory): Elysia compiles a route's handler and
 * its validators on the route's first request, so what stays on the heap afterwards is what those compilations keep.
 * Starts the server in this process (test/helpers.ts, a throwaway SQLite data dir), sends one admin-key request to
 * each of the first N GET routes of /api/admin (ids replaced by one that does not exist), collects garbage and prints
 * the heap before and after the requests. With `--dump FILE` it also writes each answer's status, content type and
 * body (error bodies whole, others by shape: ids and times differ between runs) for comparing two trees' behaviour;
 * with `--openapi FILE`, after the measurement, the /openapi/json document as served.
 *
 *   bun scripts/route-heap.ts [--root DIR] [--routes 50] [--dump FILE] [--openapi FILE]
 */
import { heapStats } from "bun:jsc";
import { resolve } from "node:path";

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const root = resolve(option("root") ?? ".");
const count = Number(option("routes") ?? 50);
const dump = option("dump");
const openapi = option("openapi");

const { startTestServer } = (await import(`${root}/test/helpers.ts`)) as typeof import("../test/helpers");

const heap = () => {
  Bun.gc(true);
  Bun.gc(true);
  return { heapSize: heapStats().heapSize, heapUsed: process.memoryUsage().heapUsed };
};
const shape = (value: unknown): unknown =>
  Array.isArray(value) ? value.slice(0, 1).map(shape) : value && typeof value === "object" ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, shape((value as any)[k])])) : typeof value;

const s = await startTestServer({});
try {
  s.server.ctx.addAllRoutes!();
  const routes = ((s.server as any).app.routes as { method: string; path: string }[])
    .filter((r) => r.method === "GET" && r.path.startsWith("/api/admin/") && !r.path.includes("*"))
    .map((r) => r.path.replace(/:[^/]+/g, "no-such-id"));
  const targets = [...new Set(routes)].sort().slice(0, count);
  // The server's first request compiles what every request shares; not what this measures.
  await s.api("/healthz", { key: null });
  const before = heap();
  const answers: unknown[] = [];
  for (const path of targets) {
    const r = await s.api(path, { headers: { "x-project-id": s.projectId } });
    const body = r.body && typeof r.body === "object" && "code" in r.body ? r.body : shape(r.body);
    answers.push({ path, status: r.status, type: r.headers.get("content-type"), body });
  }
  const after = heap();
  if (dump) await Bun.write(dump, JSON.stringify(answers, null, 1));
  if (openapi) await Bun.write(openapi, (await s.api("/openapi/json", { key: null })).text);
  const mb = (n: number) => (n / 1048576).toFixed(2);
  console.log(
    `routes=${targets.length} heapSize ${mb(before.heapSize)} -> ${mb(after.heapSize)} MB (+${mb(after.heapSize - before.heapSize)}); ` +
      `heapUsed ${mb(before.heapUsed)} -> ${mb(after.heapUsed)} MB (+${mb(after.heapUsed - before.heapUsed)})`,
  );
} finally {
  await s.server.stop?.();
  process.exit(0);
}
