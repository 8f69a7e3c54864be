import type { Server } from "bun";
import { join } from "node:path";
import type { App, AppOptions, AppContext } from "./app";
import { closeServices, createContext, makeEveryService } from "./context";
import { ModuleRouteLoader, mergeNativeRoutes } from "./route-loading";
import { type LogLevel, type LoggerOptions, createLogger, type Logger } from "./lib/log";
import { DEFAULT_MAX_BODY_BYTES } from "./lib/config";
import { type Store, openStore, parseStoreTarget } from "./lib/store";
import { openEventStore } from "./lib/eventstore";
import { storeMigrations } from "./modules";
import { ofrepBulkFastRoutes, snapshotFastRoutes } from "./modules/delivery/fast-path";
import { growthbookFastRoutes } from "./modules/growthbook/fast-path";
import { healthzFastRoute } from "./modules/system/healthz";
import { openConnectorSettings } from "./modules/connectors/settings";
import { ORGANISATIONS_LOCK } from "./modules/projects/service";
import type { SignInOptions } from "./modules/identity/options";
import { type NetworkOptions, displayHost } from "./lib/network";
import { appendOutbox, describeMailDelivery } from "./modules/identity/mail";
import { firstRunPending } from "./modules/identity/first-run";

// The app's code (Elysia, the pipeline), when the app is built: after the first answer (startServer).
const appCode = () => require("./app") as typeof import("./app");

/** Longest a graceful stop waits for in-flight requests before closing connections. */
const DRAIN_TIMEOUT_MS = 10_000;

export type ServerOptions = {
  port: number;
  host: string;
  dataDir: string;
  /** `--store` / SERVICE_STORE_URL: empty for `<data>/service.db`, or `postgres://…`. */
  store?: string;
  /** PostgreSQL connections per server (default 20). */
  storePoolSize?: number;
  /** One JSON line per request on stdout. */
  logRequests?: boolean;
  /** `--log-sdk-requests` / SERVICE_LOG_SDK_REQUESTS=1: successful SDK polls get their request line too. */
  logSdkRequests?: boolean;
  /** SERVICE_LOG_LEVEL (default info; request lines are info). */
  logLevel?: LogLevel;
  /** Where log lines go instead of stdout/stderr (tests). */
  logSink?: LoggerOptions["sink"];
  /** SERVICE_METRICS_TOKEN: /metrics takes it as a bearer token; unset, /metrics answers loopback peers only. */
  metricsToken?: string;
  quiet?: boolean;
  /** SERVICE_INIT_ADMIN_KEY: on an empty database, create the first project with this admin key. */
  initAdminKey?: string;
  /** SERVICE_ADMIN_EMAIL: owner of a headless first project. */
  adminEmail?: string;
  maxBodyBytes?: number;
  lastUsedFlushMs?: number;
  /** `--edge-only`: serve only the public intake role. */
  edgeOnly?: boolean;
  /** Keep-alive interval of SDK streams (tests shorten it). */
  streamHeartbeatMs?: number;
  /** How recently an edge relay's stream must have been seen open for it to be listed as connected (default 90 s; tests shorten it). */
  relayWindowMs?: number;
  /** Browser sign-in: SMTP, OIDC (`signInOptionsFromEnv`); tests add a mailer and a clock. */
  signIn?: SignInOptions;
  /** SERVICE_PUBLIC_URL, SERVICE_ALLOWED_HOSTS, SERVICE_TRUSTED_PROXIES (`networkOptionsFromEnv`). */
  network?: NetworkOptions;
  /** SERVICE_MAX_STREAMS_PER_KEY: open SSE streams one SDK key may hold. */
  maxStreamsPerKey?: number;
  /** How often expired sessions, links, device codes and tokens are deleted (default hourly). */
  cleanupEveryMs?: number;
  /** SERVICE_ANALYTICS_URL: a PostgreSQL database events go to (through a local spool) instead of the store. */
  analyticsUrl?: string;
  /** Epoch ms "now" for ingest defaults, series and alert evaluation (tests inject one). */
  clock?: () => number;
  /** How often evaluation counts are written (default 5 s) and the weekly stale digest considered (default hourly). */
  usageFlushMs?: number;
  staleDigestCheckMs?: number;
  /** How often alert rules are checked (default every minute). */
  alertsEveryMs?: number;
  /** How often running experiments' guardrails are checked for auto-rollback (default 15 minutes). */
  experimentsEveryMs?: number;
  /** How often guarded rollouts are checked (default every minute). */
  rolloutsEveryMs?: number;
  /** How often each server runs due scheduled changes (default 5 s; SERVICE_SCHEDULES_EVERY_MS). */
  schedulesEveryMs?: number;
  /** The public intake's rate and body limits (SERVICE_INTAKE_*; src/modules/ops/intake.ts). */
  intake?: AppOptions["intake"];
  /** The limits on request bodies still arriving: deadline, bodies at once server-wide and per client (src/lib/pipeline.ts). */
  bodyReads?: AppOptions["bodyReads"];
  /** What one browser key may cost: ingest rates, body cap, new catalog rows, errors and attributes (src/modules/keys/types.ts). */
  browserKeys?: AppOptions["browserKeys"];
  /** Connectors: vendor URLs, OAuth clients, the secret key, the delivery policy (SERVICE_* give the same; src/modules/connectors/options.ts). */
  connectors?: AppOptions["connectors"];
};

export type RunningServer = {
  url: string;
  port: number;
  ctx: AppContext;
  app: App;
  store: Store;
  /** Settles once the first answer has been written out, or FIRST_ANSWER_WAIT_MS after listening without a request. */
  firstAnswer: Promise<void>;
  /** Settles once the server has answered BUSY_ANSWERS requests within one second (never, on a server that sees no traffic). */
  busy: Promise<void>;
  /** Prints the first-run setup link (when the database has no organisation yet; nothing otherwise): called after `listening on`. */
  announceSetup(): void;
  /** Stops accepting, lets in-flight requests finish, then closes the store. */
  stop(): Promise<void>;
};

/** Headless first start: creates the first project around an operator-chosen admin key. */
async function bootstrapHeadless(ctx: AppContext, adminKey: string, ownerEmail: string, log: Logger): Promise<void> {
  const { projects, keys } = ctx.services;
  // No project means no key (keys reference projects). Asking the key directory here would cache "unknown" for this very key.
  // One transaction under one lock: two first starts (on one file or on several servers) cannot both see it
  // empty, and no project is left without its key.
  const project = await ctx.store.write(async (tx) => {
    await tx.lock(ORGANISATIONS_LOCK);
    if ((await projects.countProjects()) > 0) return null;
    const created = (await projects.createOrganisationWithProject({ projectName: "Default project", ownerEmail })).project;
    await keys.mint(created.id, { type: "admin", name: "SERVICE_INIT_ADMIN_KEY" }, adminKey);
    return created;
  });
  if (!project) return;
  log.info("created the first project from SERVICE_INIT_ADMIN_KEY", { projectId: project.id, ownerEmail });
}

const CLEANUP_EVERY_MS = 3600_000;

/**
 * Requests answered within one second that make a server busy (RunningServer.busy): a hundred SDK clients polling
 * every second, or one person's burst of admin calls. `svc serve` then gives the JIT its normal policy.
 */
export const BUSY_ANSWERS = 100;

/** Settles once `answered()` grew by BUSY_ANSWERS within one of its one-second looks; the looks end then, or with `signal`. */
export function whenBusy(answered: () => number, signal: AbortSignal, everyMs = 1000): Promise<void> {
  return new Promise((busy) => {
    let last = answered();
    const look = setInterval(() => {
      const now = answered();
      if (now - last >= BUSY_ANSWERS || signal.aborted) {
        clearInterval(look);
        if (!signal.aborted) busy();
      }
      last = now;
    }, everyMs);
    look.unref?.();
  });
}

/** How long work held back for the first answer (RunningServer.firstAnswer) waits when no request comes. */
const FIRST_ANSWER_WAIT_MS = 1000;

/** Deletes what has expired (sessions, sign-in links, OIDC logins, device codes and tokens); never fails the server. */
async function removeExpired(ctx: AppContext, everyMs: number): Promise<void> {
  try {
    // Several servers on one store: one of them does it per interval (the lease ends just before the holder's next run).
    if (!(await ctx.store.lease("cleanup:expired", Math.max(1000, everyMs * 0.9)))) return;
    const identity = await ctx.services.identity.removeExpired();
    const device = await ctx.services.device.removeExpired();
    const removed = { ...identity, ...device };
    if (Object.values(removed).some((n) => (n as number) > 0)) ctx.log.info("removed expired sign-in records", removed);
  } catch (err) {
    ctx.log.warn("cleanup of expired sign-in records failed; retrying at the next run", { error: String(err) });
  }
}

/**
 * The first-run setup link: a copy in the outbox at once (where every link is
 * kept, DECISIONS.md "Mail"), and a plain line on stdout that stands out from
 * the JSON log when `announce` runs: `svc serve` calls it after its
 * `listening on` line, so the link is the last thing a newcomer sees. The JSON
 * log line itself carries no link.
 */
function setupLinkAnnouncer(setupUrl: string, outboxPath: string, log: Logger, quiet: boolean | undefined): () => void {
  appendOutbox(outboxPath, { to: "(first-run setup)", subject: "svc first-run setup", link: setupUrl });
  let announced = false;
  return () => {
    if (announced) return;
    announced = true;
    log.warn("first-run setup: open the setup link printed on stdout (also in the outbox file) to create the first organisation, project and owner", { outbox: outboxPath });
    // console.log, as the log lines (src/lib/log.ts): one stream, kept in order, and no Node stream code to load.
    if (!quiet) console.log(`\n  First-run setup: open ${setupUrl}\n`);
  };
}

/**
 * Elysia's listen, onto the server already accepting (startServer): Elysia builds its route table and handler
 * as for a start of its own, and asks `Bun.serve` for a server, which here reloads the running one with them
 * (as Elysia itself reloads it once its plugins have settled). No connection is refused or dropped meanwhile.
 */
function listenOn(app: App, server: Server<unknown>, options: Parameters<App["listen"]>[0]): void {
  const serve = Bun.serve;
  Bun.serve = ((served: Parameters<typeof Bun.serve>[0]) => {
    server.reload(served as never);
    return server;
  }) as typeof Bun.serve;
  try {
    app.listen(options);
  } finally {
    Bun.serve = serve;
  }
}

type Checkpointing = { checkpointInBackground?: (onError: (message: string) => void) => Promise<void> };

/** The SQLite files' WAL checkpoints go to a child process (see WalCheckpointer); PostgreSQL has nothing to move. */
function moveCheckpointsOffThread(store: Store, eventStore: unknown, log: Logger): void {
  for (const [name, target] of [["store", store], ["event store", eventStore]] as const) {
    const fail = (message: string) => log.warn(`the ${name}'s background checkpoint failed; it checkpoints on the server's thread again`, { error: message });
    (target as Checkpointing).checkpointInBackground?.(fail).catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
  }
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const log = createLogger({
    requests: options.logRequests ?? true,
    sdkRequests: options.logSdkRequests,
    level: options.logLevel,
    quiet: options.quiet,
    sink: options.logSink,
  });
  const target = parseStoreTarget(options.store, options.dataDir);
  const store = await openStore(target, { migrations: storeMigrations(), poolSize: options.storePoolSize });
  const outboxPath = join(options.dataDir, "outbox.log");
  const eventStore = await openEventStore({
    dataDir: options.dataDir,
    postgresUrl: target.engine === "postgres" ? target.url : undefined,
    analyticsUrl: options.analyticsUrl,
  }, log);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const shutdown = new AbortController();
  const ctx = createContext(
    store,
    log,
    {
      maxBodyBytes,
      lastUsedFlushMs: options.lastUsedFlushMs,
      edgeOnly: options.edgeOnly,
      streamHeartbeatMs: options.streamHeartbeatMs,
      relayWindowMs: options.relayWindowMs,
      maxStreamsPerKey: options.maxStreamsPerKey,
      signIn: options.signIn,
      network: options.network,
      outboxPath,
      eventStore,
      clock: options.clock,
      alertsEveryMs: options.alertsEveryMs,
      usageFlushMs: options.usageFlushMs,
      staleDigestCheckMs: options.staleDigestCheckMs,
      experimentsEveryMs: options.experimentsEveryMs,
      rolloutsEveryMs: options.rolloutsEveryMs,
      schedulesEveryMs: options.schedulesEveryMs,
      intake: options.intake,
      connectors: { dataDir: options.dataDir, ...options.connectors },
      dataDir: options.dataDir,
      metricsToken: options.metricsToken,
      bodyReads: options.bodyReads,
      browserKeys: options.browserKeys,
    },
    shutdown.signal,
    true,
  );
  // The connectors' secret key and settings, checked now: their service is made after the first answer, and a bad
  // key must stop the start, as it did when every service was made at start.
  openConnectorSettings(ctx.options);
  if (options.initAdminKey) await bootstrapHeadless(ctx, options.initAdminKey, options.adminEmail ?? "admin@example.com", log);

  // What no request needs waits for the first answer (RunningServer.firstAnswer): run before it, it delayed the
  // answer a cold start waits for. It settles on a timer after the answer is counted: a promise's callbacks run
  // before Bun writes the answer out, so work chained on the count itself delayed the answer all the same.
  const { promise: answerCounted, resolve: answered } = Promise.withResolvers<void>();
  const firstAnswer = answerCounted.then(() => new Promise<void>((sent) => setTimeout(sent, 0)));
  // Then the app (below), and the services no request has needed yet (createServices' onDemand), with their timers.
  void firstAnswer
    .then(() => {
      if (stopped) return;
      try {
        appNow();
      } catch (err) {
        log.error("the app could not be built; the next request that needs it tries again", { error: String(err) });
      }
      makeEveryService(ctx.services);
    })
    .catch((err: unknown) => log.error("a service could not be made; it is tried again where it is next needed", { error: String(err) }));
  // The app (Elysia, its pipeline, the OpenAPI and system routes, its handler composed) is built after the first
  // answer, or by the first request Bun's table hands to it: /healthz answers from the table, ahead of it (issue
  // 32: building it and Elysia's listen were 6–7 ms of the compiled binary's cold start). The stand-ins of the
  // modules' routes and the fast routes reach it through `appNow`.
  let app: App | undefined;
  let building = false;
  const loader = new ModuleRouteLoader(() => appNow(), ctx, (app, route) => appCode().createBunRouteHandler(app, route));
  // Set now, for what asks for every route before the app is built (tests, the OpenAPI document): buildApp sets the same.
  ctx.addAllRoutes = () => loader.addAll();
  // Bun's native table, from the start (and merged into Elysia's own once the app is built, as `serve.routes`): the
  // snapshot's current-tag 304 is answered there, ahead of the pipeline.
  // The bulk OFREP 304 of browser apps' polls likewise (fast-path.ts), and GrowthBook's payload poll (growthbook/fast-path.ts).
  // Ahead of them in the table, the stand-ins of the module routes not added yet (src/route-loading.ts); a fast
  // route hands what it does not answer to its module's routes, which it adds first if need be.
  // /healthz too, on every role (src/modules/system/healthz.ts).
  const nativeRoutes = mergeNativeRoutes(loader.standIns(), {
    ...healthzFastRoute(ctx, (request) => appNow().fetch(request), answered),
    ...(options.edgeOnly
      ? {}
      : {
          ...snapshotFastRoutes(ctx, loader.fetchVia("snapshots")),
          ...ofrepBulkFastRoutes(ctx, loader.fetchVia("snapshots")),
          ...growthbookFastRoutes(ctx, loader.fetchVia("growthbook")),
        }),
  });
  const serveOptions = {
    port: options.port,
    hostname: options.host,
    // Bun's own cap answers 413 with an empty body; the app answers every oversized body itself with the
    // error body (declared lengths in onRequest, chunked ones as they are read), so this cap only backs that up.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    // Elysia asks Bun for SO_REUSEPORT: a second `svc serve` on a taken port would then start silently and
    // split the requests between two databases. Without it the second start fails with EADDRINUSE.
    reusePort: false,
    // Elysia's default, which its listen sets.
    idleTimeout: 30,
  };
  let server: Server<unknown>;
  try {
    server = Bun.serve({ ...serveOptions, routes: nativeRoutes, fetch: (request: Request) => appNow().fetch(request) });
  } catch (err) {
    await closeServices(ctx.services);
    await store.close();
    if ((err as { code?: string }).code === "EADDRINUSE") {
      throw new Error(`address already in use: ${options.host}:${options.port} (another svc or another program listens there; stop it, or pass --port)`);
    }
    throw err;
  }
  const appNow = (): App => {
    if (app) return app;
    // Nothing that building the app runs reaches for the app: were it to, it would be built twice.
    if (building) throw new Error("the app was asked for while it was being built");
    building = true;
    try {
      const built = appCode().buildApp(ctx, answered, loader);
      built.config.serve = { ...built.config.serve, routes: nativeRoutes };
      // Elysia compiles the app again and reloads the server once its lazily loaded plugins have settled, at once
      // after listen when there are none (about 3 ms, then a full collection). We have none and that pass changes
      // nothing for us, so one plugin that settles with the first answer moves it behind that answer, should a
      // request other than /healthz be the first.
      built.use(firstAnswer.then(() => (self: App) => self) as never);
      listenOn(built, server, serveOptions);
      app = built;
      return built;
    } finally {
      building = false;
    }
  };
  const port = server.port ?? options.port;
  const url = `http://${displayHost(options.host)}:${port}`;
  ctx.network.listening(options.host, port, server);
  const unanswered = setTimeout(answered, FIRST_ANSWER_WAIT_MS);
  unanswered.unref?.();
  let stopped = false;
  let announceSetup = () => {};
  if (!options.edgeOnly) {
    // Logged once the first request has been answered: as the first write to stdout it sets up the stream, which
    // delayed that answer by about 2 ms of a cold start (measured).
    if (!options.signIn?.mailer) {
      const delivery = describeMailDelivery({ smtpUrl: options.signIn?.smtpUrl, outboxPath });
      void firstAnswer.then(() => stopped || log.info("mail delivery", { delivery }));
    }
    if (await firstRunPending(store, options.adminEmail)) {
      const setup = await ctx.services.identity.bootstrap({ adminEmail: options.adminEmail, baseUrl: ctx.network.publicUrl ?? url });
      if (setup) announceSetup = setupLinkAnnouncer(setup.setupUrl, outboxPath, log, options.quiet);
    }
  }
  const cleanupEveryMs = options.cleanupEveryMs ?? CLEANUP_EVERY_MS;
  const cleanup = setInterval(() => void removeExpired(ctx, cleanupEveryMs), cleanupEveryMs);
  cleanup.unref?.();
  if (!options.edgeOnly) setTimeout(() => void removeExpired(ctx, cleanupEveryMs), 1000).unref?.();
  // The WAL checkpoints are armed a second after the server answers (the checkpoint thread that once started then
  // competed with the start for the core: 7 ms of the binary's cold start, measured), and their child process
  // starts once a WAL has grown. Until then the writers checkpoint for themselves, as SQLite does by default.
  const checkpoints = setTimeout(() => moveCheckpointsOffThread(store, eventStore, log), 1000);
  checkpoints.unref?.();
  return {
    url,
    port,
    ctx,
    /** Built on first use, if the first answer has not built it yet. */
    get app() {
      return appNow();
    },
    store,
    firstAnswer,
    busy: whenBusy(() => ctx.services.operations.telemetry.answered(), shutdown.signal),
    announceSetup: () => announceSetup(),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(cleanup);
      clearTimeout(checkpoints);
      clearTimeout(unanswered);
      // End streams first so that draining does not wait on them; give other requests time to finish.
      shutdown.abort();
      const drained = server.stop(false);
      const deadline = new Promise<"timeout">((done) => setTimeout(() => done("timeout"), DRAIN_TIMEOUT_MS).unref?.());
      if ((await Promise.race([drained, deadline])) === "timeout") await server.stop(true);
      await closeServices(ctx.services);
      await store.close();
    },
  };
}
