/**
 * The start-up baseline (issue 32): a bare Bun.serve answering /healthz as svc does (`{"ok":true}`), compiled
 * with svc's own build flags and started the same way (`serve --port P --host H`; other arguments ignored), so
 * the foundation suite times exec to the first 200 of both in the same run.
 */
export {};
const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
};
const server = Bun.serve({
  port: Number(arg("--port", "0")),
  hostname: arg("--host", "127.0.0.1"),
  fetch: (req) => (new URL(req.url).pathname === "/healthz" ? Response.json({ ok: true }) : new Response("not found", { status: 404 })),
});
process.on("SIGTERM", () => {
  void server.stop().then(() => process.exit(0));
});
