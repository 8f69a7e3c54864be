import { Authenticator } from "./lib/auth";
import { ChangeRegistry } from "./lib/changes";
import { randomBase62 } from "./lib/ids";
import { bodySizeOf } from "./lib/pipeline";
import { createLogger, type Logger } from "./lib/log";
import type { AppContext, AppOptions, ServiceContext, Services, SnapshotSection } from "./lib/module";
import { Network } from "./lib/network";
import type { Store } from "./lib/store";
import { MODULES } from "./modules";
import { RELAY_HEADER } from "./modules/relays/header";

// The services and the context routes are built on: apart from src/app.ts (the Elysia app), so that a server's
// start, which makes them, loads no Elysia (issue 32: src/server.ts builds the app after its first answer).

const authPluginCode = () => require("./lib/auth-plugin") as typeof import("./lib/auth-plugin");

/**
 * Builds every module's service, in manifest order, then tells the snapshot which sections it carries.
 *
 * With `onDemand` (a server's start), each service is made on first use instead, and `makeEveryService` makes the
 * rest: most modules' code (their contracts' schemas, their change kinds) need not be loaded and run before the
 * first answer (issue 32: about 6 ms of the compiled binary's start). Factories reach other services lazily, so
 * the order they are made in does not matter; the modules' change kinds and credential resolvers are registered
 * to be made when first needed, either way.
 */
export function createServices(
  store: Store,
  options: AppOptions = { maxBodyBytes: 1 << 20 },
  log: Logger = createLogger({ requests: false }),
  shutdown: AbortSignal = new AbortController().signal,
  changes: ChangeRegistry = new ChangeRegistry(),
  onDemand = false,
): Services {
  const services = {} as Services;
  const ctx: ServiceContext = { store, log, options, services, shutdown, changes };
  store.setListenerErrorHandler((err, channel) => log.error("store listener failed", { channel, error: String(err) }));
  const byName = services as unknown as Record<string, unknown>;
  for (const m of MODULES) {
    if (!onDemand) {
      byName[m.name] = m.createService(ctx);
      continue;
    }
    let making = false;
    Object.defineProperty(services, m.name, {
      configurable: true,
      enumerable: true,
      get() {
        // A factory that reached its own service (directly or round another) would recurse without end.
        if (making) throw new Error(`the ${m.name} service was asked for while it was being made`);
        making = true;
        try {
          const service = m.createService(ctx);
          Object.defineProperty(services, m.name, { value: service, enumerable: true, writable: false, configurable: false });
          return service;
        } finally {
          making = false;
        }
      },
    });
  }
  const sections: SnapshotSection[] = [];
  for (const m of MODULES) if (m.snapshot) sections.push(m.snapshot(() => services[m.name] as never));
  services.snapshots.setSections(sections);
  for (const m of MODULES) if (m.changes) changes.registerLater(() => m.changes!(services[m.name] as never, ctx));
  return services;
}

/** Whether `name`'s service has been made (on a server, services are made on first use). */
function isMade(services: Services, name: string): boolean {
  return Object.getOwnPropertyDescriptor(services, name)?.get === undefined;
}

/** The modules whose service has been made, in manifest order. */
export function madeServices(services: Services): string[] {
  return MODULES.map((m) => m.name).filter((name) => isMade(services, name));
}

/** Makes every service not made yet, in manifest order (startServer: once the first request is answered). */
export function makeEveryService(services: Services): void {
  for (const m of MODULES) void services[m.name];
}

/** Stops every service timer and flushes what they buffer (last module first); the store is closed by the caller. */
export async function closeServices(services: Services): Promise<void> {
  for (const m of [...MODULES].reverse()) {
    if (m.close && isMade(services, m.name)) await m.close(services[m.name] as never);
  }
}

/** The services (made on demand with `onDemand`: see createServices) and what routes need besides. */
export function createContext(store: Store, log: Logger, options: AppOptions, shutdown: AbortSignal = new AbortController().signal, onDemand = false): AppContext {
  const changes = new ChangeRegistry();
  const services = createServices(store, options, log, shutdown, changes, onDemand);
  const authenticator = new Authenticator(services.keys);
  const network = new Network(options.network);
  authenticator.registerLater(() => {
    for (const m of MODULES) {
      for (const resolver of m.bearerResolvers?.(services[m.name] as never) ?? []) authenticator.register(resolver);
      if (m.sessionResolver) authenticator.registerSession(m.sessionResolver(services[m.name] as never, network));
    }
  });
  authenticator.registerBrowserIngestGuard((principal, request) =>
    services.keys.admitBrowserIngest({ keyId: principal.credentialId, projectId: principal.projectId, address: network.clientAddress(request), bodyBytes: bodySizeOf(request) }),
  );
  // Edge relays name themselves on the calls they make here (X-Svc-Relay): a sighting, throttled, fire-and-forget.
  // Server keys' calls only (a relay streams and asks about keys with its own): a browser key is public, and
  // anyone holding one could otherwise fill the project's list with made-up relays.
  authenticator.registerSdkObserver((principal, request) => {
    if (principal.kind !== "server_key") return;
    const header = request.headers.get(RELAY_HEADER);
    if (header) services.relays.sawRequest(principal.projectId, header, network.clientAddress(request));
  });
  const id = randomBase62(12);
  let auth: AppContext["auth"] | undefined;
  return {
    store,
    services,
    authenticator,
    // The routes' auth plugin (Elysia) is made with the first routes that use it: a server builds its app after
    // its first answer, and the start loads no Elysia (issue 32).
    get auth() {
      return (auth ??= authPluginCode().authPlugin(authenticator));
    },
    log,
    options,
    shutdown,
    changes,
    network,
    toJSON: () => id,
  };
}
