import type { Server } from "bun";

// The order of Bun's native route table: what SDKs poll leads it, on the server (src/server.ts) and the edge relay.

/**
 * The same table with `first`'s paths ahead of the others, in `first`'s order (those it lacks are skipped).
 * Bun's router tries the routes in the order they were given: a bare Bun.serve holding svc's table (201 paths)
 * answered the snapshot poll's 304 10–14 % faster with its path first than at the 103rd, where the stand-ins put it
 * (issue 32, wrk on another core). Once the app was built, the place was the one Elysia gave it: behind the routes
 * of every module a request had added before the delivery module (6th after the killswitches' alone; on a server
 * whose dashboard had been used, behind the routes of each module its pages call). On svc itself, with every module
 * added before the first poll (`GET /openapi/json`), the 304 ran 1.8 % faster first (median of 12 pairs).
 */
export function pathsFirst<T>(routes: Record<string, T>, first: readonly string[]): Record<string, T> {
  const ordered: Record<string, T> = {};
  for (const path of first) if (Object.hasOwn(routes, path)) ordered[path] = routes[path]!;
  for (const [path, value] of Object.entries(routes)) if (!Object.hasOwn(ordered, path)) ordered[path] = value;
  return ordered;
}

/**
 * Every table the server is reloaded with keeps `first` at its head (pathsFirst). Elysia builds its table from
 * its own routes before the ones it was given (`serve.routes`), so the fast routes would be tried after all
 * of the app's: its reloads (at listen when it is handed a running server, and once its plugins settle) go
 * through `server.reload`, wrapped here.
 */
export function keepPathsFirst(server: Server<unknown>, first: readonly string[]): void {
  const reload = server.reload.bind(server);
  server.reload = ((options: { routes?: Record<string, unknown> }) =>
    reload((options.routes ? { ...options, routes: pathsFirst(options.routes, first) } : options) as never)) as typeof server.reload;
}
