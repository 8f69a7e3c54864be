import type { AnyElysia } from "elysia";
import type { InternalRoute } from "elysia/types";
import type { AppContext } from "./lib/module";
import { MODULES } from "./modules";
import { MODULE_ROUTES, type RouteList } from "./modules/route-table";

/**
 * Makes the handler Elysia's Bun adapter puts in Bun's table for a route (its `createBunRouteHandler`), given by
 * the app's code (src/app.ts): a server puts its stand-ins in Bun's table at start and loads no Elysia then
 * (issue 32). Not `require`d here: a require of Elysia's adapter resolves to Elysia's CommonJS build, a second
 * Elysia (and TypeBox) beside the one the app is built with (7 MB more resident under load, measured).
 */
export type RouteHandlerMaker = (app: AnyElysia, route: InternalRoute) => NativeHandler;

/** A handler in Bun's native route table (`Bun.serve({ routes })`). */
type NativeHandler = (request: Request) => Response | Promise<Response>;
export type NativeRoutes = Record<string, Record<string, NativeHandler>>;

/**
 * A module's routes are added to the app on the first request that needs them, not at start (issue 32): adding
 * the 261 routes of 33 modules (their code, Elysia instances, schemas, macros) was a third of the binary's cold
 * start and 6 MB of its resident memory at its first answer, for routes most servers answer few of, some never.
 *
 * Bun's native router holds, from the start, a stand-in for every route of every module not yet added, under the
 * route's own method and path (MODULE_ROUTES, generated from the modules and checked by test/route-table.test.ts).
 * So Bun picks among all routes exactly as it would with every module added: a stand-in is only ever chosen for a
 * request one of its module's routes is the best match for. The stand-in adds its module (with any module that
 * declares the same method and path: the route added last answers such a path, as at a full start), compiles the
 * app again, and calls the handler Elysia would have put in Bun's table for that route; it stays in the table and
 * calls that handler from then on.
 */
export class ModuleRouteLoader {
  private readonly added = new Set<string>();
  /** Modules that declare the same method and path are added together, in manifest order. */
  private readonly groups = new Map<string, Set<string>>();
  private allAdded = false;
  private readonly appOf: () => AnyElysia;

  private get app(): AnyElysia {
    return this.appOf();
  }

  /**
   * `app`: the app, or what gives it: a server builds its app after its first answer (src/server.ts), while its
   * stand-ins are in Bun's table from the start.
   */
  constructor(
    app: AnyElysia | (() => AnyElysia),
    private readonly ctx: AppContext,
    private readonly routeHandler: RouteHandlerMaker,
    private readonly table: Record<string, RouteList> = MODULE_ROUTES,
  ) {
    this.appOf = typeof app === "function" ? app : () => app;
    const owners = new Map<string, string[]>();
    for (const [name, routes] of Object.entries(table)) {
      this.groups.set(name, new Set([name]));
      for (const [method, path] of routes) {
        const key = `${method} ${path}`;
        owners.set(key, [...(owners.get(key) ?? []), name]);
      }
    }
    for (const names of owners.values()) {
      if (names.length < 2) continue;
      const merged = new Set(names.flatMap((name) => [...this.groups.get(name)!]));
      for (const name of merged) this.groups.set(name, merged);
    }
  }

  /** Adds `names` (and what shares a route with them) if not yet added; compiles the app once for them all. */
  add(names: Iterable<string>): void {
    const wanted = new Set<string>();
    for (const name of names) for (const member of this.groups.get(name) ?? [name]) if (!this.added.has(member)) wanted.add(member);
    if (wanted.size === 0) return;
    for (const m of MODULES) {
      if (!wanted.has(m.name)) continue;
      this.added.add(m.name);
      const routes = m.routes?.(this.ctx);
      if (routes) this.app.use(routes);
    }
    this.allAdded = Object.keys(this.table).every((name) => this.added.has(name));
    // The app's own router now has the routes; its fetch is composed again around them. Bun's native table is left
    // as it is (Elysia's compile reloads the server with the new fetch only): the stand-ins stay and hand on.
    this.app.compile();
  }

  /** Every module's routes: the OpenAPI document lists them all, and tests walk them. */
  addAll(): void {
    this.add(MODULES.map((m) => m.name));
  }

  isAdded(name: string): boolean {
    return this.added.has(name);
  }

  /**
   * For a request Bun's table has no route for: adds the modules with a route for it if they are not added yet,
   * and says whether it did (the request is then handed to the app again). Only a path that ends in a slash can
   * be such a request: Bun matches trailing slashes strictly, Elysia's router (and so a full start) does not.
   */
  addFor(method: string, path: string): boolean {
    if (this.allAdded || path.length < 2 || !path.endsWith("/")) return false;
    // Elysia's router answers a HEAD with the GET route of its path.
    const wanted = method === "HEAD" ? ["HEAD", "GET"] : [method];
    const owners: string[] = [];
    for (const [name, list] of Object.entries(this.table)) {
      if (!this.added.has(name) && list.some(([m, pattern]) => wanted.includes(m) && routeMatches(pattern, path))) owners.push(name);
    }
    if (owners.length === 0) return false;
    this.add(owners);
    return true;
  }

  /** The app's fetch, once `name`'s routes are in it: for a module's fast routes, which hand on what they do not answer. */
  fetchVia(name: string): NativeHandler {
    return (request) => {
      if (!this.added.has(name)) this.add([name]);
      return this.app.fetch(request);
    };
  }

  /**
   * The stand-ins, for Bun's native table: every route of every module not added yet. Once its module is added, a
   * stand-in calls the handler Elysia would have put in the table at a full start (made as Elysia makes it, on
   * first use). So the route answers as it would have: a HEAD, which Bun gives a GET route, is answered with the
   * GET's headers (the app's own fetch would wait for the whole body to count it, which an event stream never ends).
   */
  standIns(): NativeRoutes {
    const routes: NativeRoutes = {};
    for (const [name, list] of Object.entries(this.table)) {
      if (this.added.has(name)) continue;
      for (const [method, path] of list) {
        let handler: NativeHandler | undefined;
        (routes[withoutTrailingSlash(path)] ??= {})[method] = (request) => {
          if (!handler) {
            if (!this.added.has(name)) this.add([name]);
            handler = this.nativeHandler(method, path);
          }
          return handler(request);
        };
      }
    }
    return routes;
  }

  /**
   * The handler of the app's route `method path`, as Elysia's Bun adapter makes it for its native table. Elysia
   * puts no wildcard route there (its handlers read `*` from its own router): those go to the app's fetch, as they
   * did at a full start, when Bun's table had no route for them.
   */
  private nativeHandler(method: string, path: string): NativeHandler {
    if (path.endsWith("*")) return (request) => this.app.fetch(request);
    const route = (this.app.routes as InternalRoute[]).find((r) => r.method === method && r.path === path);
    // Only a stale table could name a route the module does not have (test/route-table.test.ts): the app decides.
    return route ? this.routeHandler(this.app, route) : (request) => this.app.fetch(request);
  }
}

/** `over` laid on `base` path by path, method by method (a path may have its stand-ins and a fast route). */
export function mergeNativeRoutes(base: NativeRoutes, over: Record<string, Record<string, NativeHandler>>): NativeRoutes {
  const merged: NativeRoutes = { ...base };
  for (const [path, methods] of Object.entries(over)) merged[path] = { ...merged[path], ...methods };
  return merged;
}

/** A route's path as Elysia puts it in Bun's table (which matches trailing slashes strictly): without one. */
function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** Whether `pattern` (`:name` segments, a trailing `*`) matches `path`, trailing slashes aside (as Elysia's router). */
export function routeMatches(pattern: string, path: string): boolean {
  const want = withoutTrailingSlash(pattern).split("/");
  const got = withoutTrailingSlash(path).split("/");
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment === "*" && i === want.length - 1) return got.length >= want.length - 1;
    if (i >= got.length || (segment.startsWith(":") ? got[i] === "" : segment !== got[i])) return false;
  }
  return got.length === want.length;
}

/**
 * Every module's routes as Bun's native router takes them, by module, in manifest order: the source of
 * src/modules/route-table.ts (`bun scripts/gen-route-table.ts`). Each module's plugin is built afresh here.
 */
export function listModuleRoutes(ctx: AppContext): Record<string, RouteList> {
  const table: Record<string, RouteList> = {};
  for (const m of MODULES) {
    const plugin = m.routes?.(ctx) as AnyElysia | undefined;
    if (!plugin) continue;
    table[m.name] = plugin.routes.map((route) => [route.method, nativePath(route.method, route.path)] as const);
  }
  return table;
}

const NATIVE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "DELETE", "PATCH", "POST", "PUT"]);

/**
 * The path, checked to be spelled the same in Bun's native router: `:name` parameters and a trailing `*` mean the
 * same in both. What Bun would read otherwise (an optional parameter, a character to escape) or
 * a method it has no key for stops the generator, rather than making a stand-in that answers other requests.
 */
function nativePath(method: string, path: string): string {
  const plain = !path.includes("?") && encodeURI(path) === path && !path.slice(0, -1).includes("*");
  if (!plain || !NATIVE_METHODS.has(method)) throw new Error(`a route Bun's native router cannot hold as it is: ${method} ${path}`);
  return path;
}
