// The baseline for bench/run.ts: a bare Bun.serve answering fixed JSON bytes (BENCH_BODY) on every path.
const body = process.env.BENCH_BODY ?? '{"ok":true}';
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response(body, { headers: { "content-type": "application/json;charset=utf-8" } }),
});
console.log(`listening on http://127.0.0.1:${server.port}`);
process.on("SIGTERM", () => {
  void server.stop().then(() => process.exit(0));
});
