/**
 * The baseline every svc figure is compared with: a bare Bun.serve answering
 * the same bytes svc answers. BENCH_BODY is the plain body, BENCH_GZIP_B64 an
 * optional gzip form of it, BENCH_ETAG an optional tag: a request carrying it
 * in If-None-Match gets a 304, as svc's snapshot does. With BENCH_READ_BODY=1
 * a request's body is read first (as svc's OFREP bulk call reads its
 * context), then answered alike; chosen at start, so the plain server's
 * handler is untouched.
 */
const body = process.env.BENCH_BODY ?? '{"ok":true}';
const gzip = process.env.BENCH_GZIP_B64 ? Buffer.from(process.env.BENCH_GZIP_B64, "base64") : null;
const etag = process.env.BENCH_ETAG;
const base: Record<string, string> = etag ? { etag, "cache-control": "no-cache", vary: "Accept-Encoding, Origin" } : {};
// BENCH_TYPE: the content type of the body (JSON unless said, e.g. text/html for the dashboard's baseline page).
const json = { ...base, "content-type": process.env.BENCH_TYPE ?? "application/json" };
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: process.env.BENCH_READ_BODY === "1" ? (req) => req.bytes().then(() => answer(req)) : answer,
});

function answer(req: Request): Response {
  if (etag && req.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers: base });
  if (gzip && (req.headers.get("accept-encoding") ?? "").includes("gzip")) {
    return new Response(gzip, { headers: { ...json, "content-encoding": "gzip" } });
  }
  return new Response(body, { headers: json });
}
console.log(`listening on http://127.0.0.1:${server.port}`);
process.on("SIGTERM", () => {
  void server.stop().then(() => process.exit(0));
});
