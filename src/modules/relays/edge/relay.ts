import { ChangeRegistry } from "../../../lib/changes";
import type { Server } from "bun";
import type { Elysia } from "elysia";
import { buildPipeline } from "../../../app";
import { Authenticator } from "../../../lib/auth";
import { authPlugin } from "../../../lib/auth-plugin";
import { DEFAULT_MAX_BODY_BYTES } from "../../../lib/config";
import { ENVS, isEnv } from "../../../lib/envs";
import type { EventRow } from "../../../lib/eventstore/types";
import { randomBase62, sha256Hex } from "../../../lib/ids";
import { createLogger } from "../../../lib/log";
import type { AppContext, Services } from "../../../lib/module";
import { Network, displayHost } from "../../../lib/network";
import { snapshotFastRoutes } from "../../delivery/fast-path";
import { deliveryRoutes } from "../../delivery/routes";
import { growthbookFastRoutes } from "../../growthbook/fast-path";
import { growthbookRoutes } from "../../growthbook/routes";
import type { RelayOptions } from "./options";
import { KEY_TTL_MS } from "./keys";
import { relayRoutes } from "./routes";
import { Relay } from "./service";
import { followEnv } from "./snapshots";

export type { RelayOptions } from "./options";

/**
 * Routes served over the relay's snapshots besides the delivery module's (snapshot, stream, OFREP, key):
 * each gets the relay's context, whose `services.snapshots` is the relay's copy, and must read only that
 * (and the authenticator, `analytics.append` for exposures, `attributes.noteContext`). GrowthBook's paths:
 * `/api/features/{key}`, `/sub/{key}`, `/api/eval/{key}`.
 */
// biome-ignore lint: Elysia's plugin type is deliberately loose here (as in ModuleManifest.routes).
export const RELAY_SNAPSHOT_ROUTES: ((ctx: AppContext) => Elysia<any, any, any, any, any, any, any>)[] = [growthbookRoutes];

type NativeRoutes = Record<string, { GET: (request: Request) => Response | Promise<Response> }>;
/** Bun-native answers of the hottest polls, each falling back to the app, as in src/server.ts: the snapshot's and GrowthBook's features. */
export const RELAY_FAST_ROUTES: ((ctx: AppContext, fallback: (request: Request) => Response | Promise<Response>) => NativeRoutes)[] = [snapshotFastRoutes, growthbookFastRoutes];

export type RunningRelay = { url: string; port: number; relay: Relay; stop(): Promise<void> };

/**
 * `svc serve --relay <upstream> --key <server key>`: an edge relay for the key's project. It learns its
 * project from the upstream (or, when the upstream is away, from its disk), serves the saved snapshots at
 * once, follows every env's stream, and forwards what SDKs and the intake send.
 */
export async function startRelay(options: RelayOptions): Promise<RunningRelay> {
  const log = createLogger({ requests: options.logRequests ?? true, sdkRequests: options.logSdkRequests, level: options.logLevel, quiet: options.quiet, sink: options.logSink });
  const upstream = options.upstream.replace(/\/+$/, "");
  const relay = new Relay({ ...options, upstream }, log);
  const keyHash = sha256Hex(options.key);

  // Who the relay is: asked of the upstream, else remembered from the last run with this key.
  const identify = async (): Promise<boolean> => {
    const info = await relay.askUpstream();
    if (info === null) throw new Error(`the upstream ${upstream} refused the relay's key (--key must be a server key of the project to relay)`);
    if (info === undefined) return false;
    if (info.type !== "server") throw new Error(`--key must be a server key; the upstream says it is a ${info.type} key`);
    relay.disk.setIdentity({ keyHash, projectId: info.projectId, defaultEnv: info.defaultEnv ?? "prod" });
    relay.snapshots.projectId = info.projectId;
    relay.snapshots.defaultEnvValue = isEnv(info.defaultEnv) ? info.defaultEnv : "prod";
    return true;
  };
  const saved = relay.disk.identity();
  if (saved && saved.keyHash === keyHash) {
    relay.snapshots.loadFromDisk(saved.projectId);
    relay.snapshots.defaultEnvValue = isEnv(saved.defaultEnv) ? saved.defaultEnv : "prod";
  }
  let identified: boolean;
  try {
    identified = await identify();
  } catch (err) {
    relay.disk.close();
    throw err;
  }
  if (!identified) {
    if (relay.snapshots.projectId) log.warn("relay: the upstream is not answering; serving the snapshots saved on disk, marked stale", { upstream });
    else log.warn("relay: the upstream is not answering and nothing is saved yet; /healthz answers 503 until it does", { upstream });
  }

  const shutdown = new AbortController();
  const telemetry = relay.telemetry;
  const services = {
    snapshots: relay.snapshots,
    keys: relay.keys,
    // Evaluation contexts' attribute names are learnt by the upstream from the events it gets, not from a relay.
    attributes: { noteContext: () => {} },
    analytics: { append: (rows: EventRow[]) => relay.appendExposures(rows), now: () => Date.now() },
    // OFREP and remote evaluations are counted here and sent upstream in batches (flushEvaluations).
    usage: { recorder: relay.evaluations },
    operations: { telemetry },
    // A preflight carries no key: the relay approves any origin there, and each key's own origins (as the upstream
    // answered them) decide the real request, in the auth macro.
    projects: { isCorsOrigin: async () => true },
  } as unknown as Services;
  const authenticator = new Authenticator(relay.keys);
  const network = new Network(options.network);
  const id = randomBase62(12);
  const ctx: AppContext = {
    // The relay has no store: the snapshot fast path only listens on it for key announcements (the relay's keys expire instead).
    store: { listen: () => () => {} } as unknown as AppContext["store"],
    services,
    authenticator,
    auth: authPlugin(authenticator),
    log,
    options: {
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      streamHeartbeatMs: options.streamHeartbeatMs,
      metricsToken: options.metricsToken,
      network: options.network,
    },
    shutdown: shutdown.signal,
    // The relay publishes nothing: no change kinds.
    changes: new ChangeRegistry(),
    network,
    toJSON: () => id,
  };

  const stale = () => relay.snapshots.staleSeconds();
  const app = buildPipeline(ctx)
    // Every answer given while the relay does not follow its upstream live says for how long (whole seconds).
    .onRequest(({ set }) => {
      const seconds = stale();
      if (seconds === undefined) return;
      set.headers["x-svc-stale"] = String(seconds);
      // A browser's page may read it too (the pipeline lists what browsers may read on the SDK paths).
      const exposed = set.headers["access-control-expose-headers"];
      if (typeof exposed === "string") set.headers["access-control-expose-headers"] = `${exposed}, X-Svc-Stale`;
    })
    .use(relayRoutes(ctx, relay))
    .use(deliveryRoutes(ctx));
  for (const routes of RELAY_SNAPSHOT_ROUTES) app.use(routes(ctx));

  const fallback = (request: Request) => app.fetch(request);
  const fast: NativeRoutes = Object.assign({}, ...RELAY_FAST_ROUTES.map((routes) => routes(ctx, fallback)));
  const withStale = (response: Response | Promise<Response>): Response | Promise<Response> => {
    if (stale() === undefined) return response;
    const mark = (r: Response) => {
      r.headers.set("x-svc-stale", String(stale() ?? 0));
      return r;
    };
    return response instanceof Promise ? response.then(mark) : mark(response);
  };
  const routes = Object.fromEntries(Object.entries(fast).map(([path, { GET }]) => [path, { GET: (request: Request) => withStale(GET(request)) }]));
  app.config.serve = { ...app.config.serve, routes };
  app.listen({ port: options.port, hostname: options.host, maxRequestBodySize: Number.MAX_SAFE_INTEGER, development: false, reusePort: false });
  const server = app.server as Server<unknown>;
  const port = server.port ?? options.port;
  const url = `http://${displayHost(options.host)}:${port}`;
  network.listening(options.host, port, server);

  // Follow every env once the relay knows its project (from the upstream, or from its disk: the streams then
  // say whether the key is still good); the queue is tried again whenever a stream opens.
  const startFollowing = () => {
    for (const env of ENVS) {
      void followEnv({ upstream, key: options.key, env, snapshots: relay.snapshots, signal: shutdown.signal, log, idleMs: options.streamIdleMs, onChange: () => relay.forwarder.kick(), hello: relay.hello });
    }
  };
  const following = (async () => {
    let delay = 250;
    while (!relay.snapshots.projectId) {
      await Bun.sleep(delay);
      if (shutdown.signal.aborted) return;
      delay = Math.min(5000, delay * 2);
      await identify().catch((err) => log.error("relay: the upstream refused the relay's key", { error: String(err) }));
    }
    if (!identified) void identify().catch(() => {});
    startFollowing();
  })();
  // The project's defaultEnv (what a request naming no env gets) may change upstream: asked again as often as keys are.
  const reidentify = setInterval(() => void identify().catch((err) => log.error("relay: the upstream refused the relay's key", { error: String(err) })), options.keyTtlMs ?? KEY_TTL_MS);
  reidentify.unref?.();
  relay.forwarder.start();
  const evaluationsTimer = setInterval(() => relay.flushEvaluations(), options.evaluationsFlushMs ?? Relay.EVALUATIONS_EVERY_MS);
  evaluationsTimer.unref?.();

  let stopped = false;
  return {
    url,
    port,
    relay,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(reidentify);
      clearInterval(evaluationsTimer);
      shutdown.abort();
      await following.catch(() => {});
      await server.stop(true);
      // Counted until the last answer; queued on disk, sent by the next run if not now.
      relay.flushEvaluations();
      await relay.forwarder.stop();
      relay.snapshots.close();
      relay.disk.close();
    },
  };
}
