import type { Server } from "bun";
import { type App, buildApp, closeServices, createContext, type AppContext } from "./app";
import { type Db, immediate, openDatabase } from "./lib/db";
import { createLogger, type Logger } from "./lib/log";
import { DEFAULT_MAX_BODY_BYTES, databasePath } from "./lib/config";
import { snapshotFastRoutes } from "./modules/delivery/fast-path";
import type { SignInOptions } from "./modules/identity/options";

/** Longest a graceful stop waits for in-flight requests before closing connections. */
const DRAIN_TIMEOUT_MS = 10_000;

export type ServerOptions = {
  port: number;
  host: string;
  dataDir: string;
  /** One JSON line per request on stdout. */
  logRequests?: boolean;
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
  /** Browser sign-in: public URL, SMTP, OIDC (`signInOptionsFromEnv`); tests add a mailer and a clock. */
  signIn?: SignInOptions;
};

export type RunningServer = {
  url: string;
  port: number;
  ctx: AppContext;
  app: App;
  db: Db;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  stop(): Promise<void>;
};

/** Headless first start: creates the first project around an operator-chosen admin key. */
function bootstrapHeadless(ctx: AppContext, adminKey: string, ownerEmail: string, log: Logger): void {
  const { projects, keys } = ctx.services;
  // No project means no key (keys reference projects). Asking resolveSecret here would cache "unknown" for this very key.
  // One transaction: two first starts on the same file cannot both see it empty, and no project is left without its key.
  const project = immediate(ctx.db, () => {
    if (projects.countProjects() > 0) return null;
    const created = projects.createOrganisationWithProject({ projectName: "Default project", ownerEmail }).project;
    keys.mint(created.id, { type: "admin", name: "SERVICE_INIT_ADMIN_KEY" }, adminKey);
    return created;
  });
  if (!project) return;
  log.info("created the first project from SERVICE_INIT_ADMIN_KEY", { projectId: project.id, ownerEmail });
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const log = createLogger({ requests: options.logRequests ?? true, quiet: options.quiet });
  const db = openDatabase(databasePath(options.dataDir));
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const shutdown = new AbortController();
  const ctx = createContext(db, log, { maxBodyBytes, lastUsedFlushMs: options.lastUsedFlushMs, edgeOnly: options.edgeOnly, streamHeartbeatMs: options.streamHeartbeatMs, signIn: options.signIn }, shutdown.signal);
  if (options.initAdminKey) bootstrapHeadless(ctx, options.initAdminKey, options.adminEmail ?? "admin@example.com", log);

  const app = buildApp(ctx);
  // Elysia merges `serve.routes` into Bun's native router: the snapshot's current-tag 304 is answered there, ahead of the pipeline.
  if (!options.edgeOnly) app.config.serve = { ...app.config.serve, routes: snapshotFastRoutes(ctx, (request) => app.fetch(request)) };
  app.listen({
    port: options.port,
    hostname: options.host,
    // Bun's own cap answers 413 with an empty body; the app answers every oversized body itself with the
    // error body (declared lengths in onRequest, chunked ones as they are read), so this cap only backs that up.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
  });
  const server = app.server as Server<unknown>;
  const port = server.port ?? options.port;
  const shownHost = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `http://${shownHost}:${port}`;
  if (!options.edgeOnly) {
    const setup = ctx.services.identity.bootstrap({ adminEmail: options.adminEmail, baseUrl: options.signIn?.publicUrl ?? url });
    if (setup) log.warn("first-run setup", { url: setup.setupUrl });
  }
  let stopped = false;
  return {
    url,
    port,
    ctx,
    app,
    db,
    async stop() {
      if (stopped) return;
      stopped = true;
      // End streams first so that draining does not wait on them; give other requests time to finish.
      shutdown.abort();
      const drained = server.stop(false);
      const deadline = new Promise<"timeout">((done) => setTimeout(() => done("timeout"), DRAIN_TIMEOUT_MS).unref?.());
      if ((await Promise.race([drained, deadline])) === "timeout") await server.stop(true);
      closeServices(ctx.services);
      db.close();
    },
  };
}
