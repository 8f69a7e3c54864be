import type { Elysia } from "elysia";
import type { CliNoun } from "../cli/command";
import type { ChangeKind, ChangeRegistry } from "./changes";
import type { Authenticator, BearerResolver, SessionResolver } from "./auth";
import type { authPlugin } from "./auth-plugin";
import type { Env } from "./envs";
import type { Logger } from "./log";
import type { McpTool } from "./mcp-tool";
import type { Network, NetworkOptions } from "./network";
import type { BodyReadLimits } from "./pipeline";
import type { Migration, Store } from "./store";

/**
 * Every module's service, by manifest name. Each module adds its own entry
 * from its manifest file:
 *
 *     declare module "../../lib/module" { interface Services { keys: KeysService } }
 *
 * so that nothing in src/lib imports a module.
 */
export interface Services {}

/** What the server was started with. Modules add their own options the same way as services. */
export interface AppOptions {
  /** Largest request body accepted, in bytes (413 `Body too large` above). */
  maxBodyBytes: number;
  /** `svc serve --edge-only`: answer only the public intake (/ops) and /healthz. */
  edgeOnly?: boolean;
  /** SERVICE_PUBLIC_URL, SERVICE_ALLOWED_HOSTS, SERVICE_TRUSTED_PROXIES. */
  network?: NetworkOptions;
  /** The limits on request bodies still arriving (defaults in src/lib/pipeline.ts; tests shorten them). */
  bodyReads?: Partial<BodyReadLimits>;
}

/** What a service factory gets. `services` is filled in manifest order: reach other services lazily, not in the factory. */
export type ServiceContext = {
  store: Store;
  log: Logger;
  options: AppOptions;
  services: Services;
  /** Aborted when the server begins to shut down. */
  shutdown: AbortSignal;
  /**
   * Every module's publishable change kinds (src/lib/changes.ts), filled once all services exist. Always set by
   * createServices; optional only so that tests which build a bare context for one service need not make one.
   */
  changes?: ChangeRegistry;
};

/** What routes get: the services plus the HTTP pieces. */
export type AppContext = ServiceContext & {
  authenticator: Authenticator;
  auth: ReturnType<typeof authPlugin>;
  /** Our host names, the public origin of links, and trusted proxies. */
  network: Network;
  /**
   * Modules pass the context as their Elysia plugin `seed`, which Elysia
   * JSON-stringifies to dedupe plugins per app: this keeps that to one short
   * id instead of walking every service.
   */
  toJSON(): string;
  /**
   * Adds the routes of every module not added yet (modules' routes are added on demand: src/route-loading.ts).
   * Set by buildApp; the OpenAPI document calls it before it lists the routes.
   */
  addAllRoutes?(): void;
  /** Adds the modules with a route for a request Bun's table had none for; true when it added any (src/route-loading.ts). */
  addRoutesFor?(method: string, path: string): boolean;
};

/** One part of the published snapshot SDKs poll (killswitches, configs, ...). */
export type SnapshotSection = {
  /** The snapshot's top-level field. */
  field: string;
  /** What is published on the env, from committed data. */
  published(projectId: string, env: Env): Promise<unknown>;
};

/**
 * A module: one folder whose manifest.ts exports this. app.ts, the migration
 * list and the snapshot read the manifests (src/modules/index.ts lists them
 * in dependency order).
 */
export type ModuleManifest<K extends keyof Services = keyof Services> = {
  name: K;
  /** Its schema steps, released order, append only (see lib/store/migrate.ts). */
  migrations: Migration[];
  createService(ctx: ServiceContext): Services[K];
  // biome-ignore lint: Elysia's plugin type is deliberately loose here.
  routes?(ctx: AppContext): Elysia<any, any, any, any, any, any, any>;
  /** Its part of the SDK snapshot; `service` gives its service when the section is read (services are made on first use). */
  snapshot?(service: () => Services[K]): SnapshotSection;
  /** The publishable changes it offers (scheduled changes, change requests): see src/lib/changes.ts. */
  changes?(service: Services[K], ctx: ServiceContext): ChangeKind[];
  /** Its nouns in the `svc` CLI (`svc gates …`), loaded when one is run. */
  cli?: readonly CliNoun[];
  /** Its tools in `svc mcp` (the tool server calls the HTTP API as the signed-in user). */
  mcpTools?: readonly McpTool[];
  /** Bearer secrets it resolves (device access tokens, API tokens). */
  bearerResolvers?(service: Services[K]): BearerResolver[];
  /** The browser session cookie on /api/admin (one module, identity, provides it). */
  sessionResolver?(service: Services[K], network: Network): SessionResolver;
  /** Stops timers and flushes what it buffers, before the store closes. */
  close?(service: Services[K]): Promise<void> | void;
};
