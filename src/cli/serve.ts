import { join, resolve } from "node:path";
import { DEFAULT_DATA_DIR, DEFAULT_HOST, UsageError } from "../lib/config";
import { KEY_SECRET_PATTERN } from "../modules/keys/service";
import { signInOptionsFromEnv } from "../modules/identity/options";
import { networkOptionsFromEnv } from "../lib/network";
import { intakeOptionsFromEnv } from "../modules/ops/intake";
import { browserKeyLimitsFromEnv } from "../modules/keys/options";
import { startServer, whenBusy } from "../server";
import type { Command } from "./command";
import { portSetting } from "./port";
import { STORE_FLAG, storeOpenFailure, storeTargetOf } from "./store-option";
import { parseLogLevel } from "../lib/log";
import { backupScheduleOf, prepareBackupDir, startScheduledBackups } from "../lib/backups";
import type { SqliteStore } from "../lib/store";

/*
 * The long-running server reads its few settings with plain checks instead of
 * arktype (which the short-lived CLI commands use): importing arktype keeps
 * about 40 MB resident, and the server is held to under 100 MB under load.
 */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const serveCommand: Command = {
  name: "serve",
  summary: "Run the HTTP server (admin API, SDK paths, device sign-in, intake) on one port",
  details: [
    "Environment: PORT, HOST, SERVICE_DATA_DIR and SERVICE_STORE_URL stand in for the flags; SERVICE_INIT_ADMIN_KEY creates the first project around that admin key on an empty database; SERVICE_ADMIN_EMAIL names its owner; SERVICE_ANALYTICS_URL (postgres://…) sends analytics events to that database through a local spool instead of <data>/events.db. SERVICE_LOG_LEVEL is debug, info (default), warn or error; request lines are info. SERVICE_METRICS_TOKEN guards GET /metrics (Authorization: Bearer <token>); unset, /metrics answers loopback peers only. Prints `listening on http://HOST:PORT` once it accepts requests, then (on an empty database only) the first-run setup link; SIGTERM or SIGINT drains, prints a last JSON line, msg \"stopped\", and exits 0.",
  ],
  examples: ["svc serve", "svc serve --port 9000 --data /var/lib/svc", "svc serve --store postgres://svc:secret@db:5432/svc", "PORT=9000 SERVICE_DATA_DIR=/data svc serve"],
  flags: {
    port: { type: "string", value: "PORT", help: "TCP port to listen on, 0 for any free one (default: PORT, else 8080)" },
    host: { type: "string", value: "HOST", help: "Address to bind (default: HOST, else 0.0.0.0, every interface)" },
    data: { type: "string", value: "DIR", help: "Directory of the database, service.db, and the outbox (default: SERVICE_DATA_DIR, else ./data)" },
    store: STORE_FLAG,
    "edge-only": { type: "boolean", help: "Serve only the public intake, /healthz and /metrics (the edge role), no admin API, SDK paths or dashboard" },
    "no-request-log": { type: "boolean", help: "Do not print one JSON line per request on stdout" },
    "log-sdk-requests": {
      type: "boolean",
      help: "Also log SDK polls that succeed (snapshot, stream connects, OFREP); by default they are only counted in /metrics and logged when they fail (env SERVICE_LOG_SDK_REQUESTS=1)",
    },
    relay: {
      type: "string",
      value: "URL",
      help: "Run as an edge relay in front of this upstream (a svc serve, or another relay): serve the SDK paths and OFREP of one project from its followed snapshots, forward events, errors and the intake; needs --key; state in <data>/relay.db",
    },
    key: { type: "string", value: "KEY", help: "With --relay: a server key of the project to relay (env SERVICE_RELAY_KEY, which keeps it out of the process list)" },
    "relay-name": { type: "string", value: "NAME", help: "With --relay: the name the upstream lists this relay under in svc relays list (env SERVICE_RELAY_NAME; default the host name)" },
    "backup-dir": { type: "string", value: "DIR", help: "Write scheduled backups of service.db here, as service-20261124T101500Z.db (SQLite only; env SERVICE_BACKUP_DIR)" },
    "backup-every": { type: "string", value: "DURATION", help: "Time between scheduled backups: 6h, 30m, 1h30m, 1d (default 24h; env SERVICE_BACKUP_EVERY)" },
    "backup-keep": { type: "string", value: "N", help: "Scheduled backups kept, the newest N (default 7; env SERVICE_BACKUP_KEEP)" },
  },
  async run({ values }) {
    const port = portSetting(values.port, process.env.PORT);
    const host = (values.host as string | undefined) ?? process.env.HOST ?? DEFAULT_HOST;
    if (host.trim() === "") throw new UsageError("--host must not be empty");
    const dataDir = resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
    const initAdminKey = process.env.SERVICE_INIT_ADMIN_KEY || undefined;
    // Checked without parseOrThrow so that the message never echoes the secret.
    if (initAdminKey && !KEY_SECRET_PATTERN.test(initAdminKey)) {
      throw new UsageError("SERVICE_INIT_ADMIN_KEY must be sdk_admin_ followed by 16-128 letters or digits");
    }
    const adminEmail = process.env.SERVICE_ADMIN_EMAIL || undefined;
    if (adminEmail && !EMAIL.test(adminEmail)) throw new UsageError(`SERVICE_ADMIN_EMAIL: must be an email address (was "${adminEmail}")`);

    const flushText = process.env.SERVICE_USAGE_FLUSH_MS;
    const usageFlushMs = flushText === undefined || flushText === "" ? undefined : Number(flushText);
    if (usageFlushMs !== undefined && (!Number.isInteger(usageFlushMs) || usageFlushMs < 100)) {
      throw new UsageError(`SERVICE_USAGE_FLUSH_MS: must be a whole number of milliseconds, at least 100 (was "${flushText}")`);
    }
    const streams = process.env.SERVICE_MAX_STREAMS_PER_KEY;
    const maxStreamsPerKey = streams === undefined || streams === "" ? undefined : Number(streams);
    if (maxStreamsPerKey !== undefined && (!Number.isInteger(maxStreamsPerKey) || maxStreamsPerKey < 1)) {
      throw new UsageError(`SERVICE_MAX_STREAMS_PER_KEY: must be a whole number of at least 1 (was "${streams}")`);
    }

    const schedulesEvery = process.env.SERVICE_SCHEDULES_EVERY_MS;
    const schedulesEveryMs = schedulesEvery === undefined || schedulesEvery === "" ? undefined : Number(schedulesEvery);
    if (schedulesEveryMs !== undefined && (!Number.isInteger(schedulesEveryMs) || schedulesEveryMs < 50)) {
      throw new UsageError(`SERVICE_SCHEDULES_EVERY_MS: must be a whole number of milliseconds, at least 50 (was "${schedulesEvery}")`);
    }

    const analyticsUrl = process.env.SERVICE_ANALYTICS_URL || undefined;
    if (analyticsUrl && !/^postgres(ql)?:\/\/./i.test(analyticsUrl)) {
      throw new UsageError("SERVICE_ANALYTICS_URL: must be a PostgreSQL URL, postgres://USER:PASSWORD@HOST:PORT/DATABASE");
    }

    const logLevel = parseLogLevel(process.env.SERVICE_LOG_LEVEL);
    const relayKey = (values.key as string | undefined) ?? process.env.SERVICE_RELAY_KEY;
    if (values.relay !== undefined) return runRelay({ upstream: values.relay as string, key: relayKey, port, host, dataDir, logLevel, values });
    if (values.key !== undefined) throw new UsageError("--key goes with --relay <upstream url> (the relay's server key)");
    if (values["relay-name"] !== undefined) throw new UsageError("--relay-name goes with --relay <upstream url>");
    const logSdkEnv = process.env.SERVICE_LOG_SDK_REQUESTS ?? "";
    if (!["", "0", "1", "true", "false"].includes(logSdkEnv)) {
      throw new UsageError(`SERVICE_LOG_SDK_REQUESTS: must be 1 (or true) to log successful SDK polls, 0 (or false) not to (was "${logSdkEnv}")`);
    }
    const metricsToken = process.env.SERVICE_METRICS_TOKEN || undefined;
    // Checked without echoing it: it is a secret.
    if (metricsToken && !/^\S{16,512}$/.test(metricsToken)) throw new UsageError("SERVICE_METRICS_TOKEN: must be 16-512 characters without spaces (it is sent as a bearer token)");
    const target = storeTargetOf(values);
    const backups = backupScheduleOf(values, process.env);
    if (backups && target.engine === "postgres") {
      throw new UsageError('--backup-dir/SERVICE_BACKUP_DIR back up SQLite files; this store is PostgreSQL: schedule pg_dump instead (cron or a systemd timer running pg_dump --format=custom --file svc-$(date +%Y%m%dT%H%M%SZ).dump "$SERVICE_STORE_URL")');
    }
    if (backups) prepareBackupDir(backups.dir);
    const storeUrl = target.engine === "postgres" ? target.url : `sqlite:${target.path}`;
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer({
      port,
      host,
      dataDir,
      store: storeUrl,
      initAdminKey,
      adminEmail,
      signIn: signInOptionsFromEnv(process.env),
      network: networkOptionsFromEnv(process.env),
      intake: intakeOptionsFromEnv(process.env),
      browserKeys: browserKeyLimitsFromEnv(process.env),
      maxStreamsPerKey,
      usageFlushMs,
      schedulesEveryMs,
      analyticsUrl,
      edgeOnly: values["edge-only"] === true,
      logRequests: values["no-request-log"] !== true,
      logSdkRequests: values["log-sdk-requests"] === true || logSdkEnv === "1" || logSdkEnv === "true",
      logLevel,
      metricsToken,
    });
    } catch (err) {
      if ((err as Error).message?.startsWith("address already in use")) throw err;
      throw storeOpenFailure(target, err);
    }
    console.log(`listening on ${server.url}`);
    // The first-run setup link (only on an empty database) comes last: it is what a newcomer must act on.
    server.announceSetup();
    normalJitOnceBusy(server.busy);
    const scheduled = backups ? startScheduledBackups(server.store as SqliteStore, { ...backups, keyFile: process.env.SERVICE_SECRET_KEY ? undefined : join(dataDir, "secret.key") }, server.ctx.log) : undefined;

    await new Promise<void>((done) => {
      const shutdown = async (signal: string) => {
        process.off("SIGTERM", onTerm);
        process.off("SIGINT", onInt);
        const started = performance.now();
        console.log(JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "shutting down", signal }));
        await scheduled?.stop();
        await server.stop();
        // The last line: requests drained and the store closed, so whoever pressed Ctrl-C knows it is safe to go on.
        console.log(JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "stopped", signal, ms: Math.round(performance.now() - started) }));
        done();
      };
      const onTerm = () => void shutdown("SIGTERM");
      const onInt = () => void shutdown("SIGINT");
      process.on("SIGTERM", onTerm);
      process.on("SIGINT", onInt);
    });
    return 0;
  },
};


/**
 * The compiled binary starts with a raised JIT tier-up threshold (scripts/build.ts, --compile-jit-policy): the
 * start's run-once code stays in the interpreter instead of keeping JIT threads busy on the server's core. The
 * normal policy is back once the server (or relay) is busy, a hundred answers within a second (outside a compiled
 * binary this changes nothing). Restored at the first answer instead, a server nobody asked anything optimised its
 * own timers (the SQLite store's look for other processes' changes, four times a second): the optimising
 * compiler's code, 2.3 MB of the binary, was paged in 16 s after start (issue 32, idle memory).
 */
function normalJitOnceBusy(busy: Promise<void>): void {
  void busy.then(() => Bun.unsafe.setJITPolicy(1));
}

/** `svc serve --relay URL --key KEY`: the edge relay (src/modules/relays/edge) instead of the server. */
async function runRelay(input: { upstream: string; key: string | undefined; port: number; host: string; dataDir: string; logLevel: ReturnType<typeof parseLogLevel>; values: Record<string, unknown> }): Promise<number> {
  let upstream: URL;
  try {
    upstream = new URL(input.upstream);
  } catch {
    throw new UsageError(`--relay: expected the upstream's URL, like http://svc.internal:8080 (was "${input.upstream}")`);
  }
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new UsageError("--relay: the upstream's URL starts with http:// or https://");
  if (!input.key) throw new UsageError("--relay needs --key <server key> (or SERVICE_RELAY_KEY): a server key of the project to relay");
  // Checked without echoing it: it is a secret.
  if (!/^sdk_server_[A-Za-z0-9]{16,128}$/.test(input.key)) throw new UsageError("--key: must be a server key, sdk_server_ followed by letters and digits");
  for (const flag of ["store", "edge-only", "backup-dir", "backup-every", "backup-keep"]) {
    if (input.values[flag] !== undefined) throw new UsageError(`--${flag} does not go with --relay: a relay keeps no store of its own`);
  }
  const metricsToken = process.env.SERVICE_METRICS_TOKEN || undefined;
  const queue = process.env.SERVICE_RELAY_QUEUE_MAX;
  const queueMax = queue === undefined || queue === "" ? undefined : Number(queue);
  if (queueMax !== undefined && (!Number.isInteger(queueMax) || queueMax < 1)) throw new UsageError(`SERVICE_RELAY_QUEUE_MAX: must be a whole number of at least 1 (was "${queue}")`);
  const name = (input.values["relay-name"] as string | undefined) ?? (process.env.SERVICE_RELAY_NAME || undefined);
  if (name !== undefined && !/^[\x21-\x7e]{1,64}$/.test(name)) throw new UsageError("--relay-name: 1 to 64 printable characters, no spaces (SERVICE_RELAY_NAME alike)");
  const { startRelay } = await import("../modules/relays/edge/relay");
  const relay = await startRelay({
    port: input.port,
    host: input.host,
    dataDir: input.dataDir,
    upstream: upstream.origin + upstream.pathname.replace(/\/+$/, ""),
    key: input.key,
    name,
    logRequests: input.values["no-request-log"] !== true,
    logSdkRequests: input.values["log-sdk-requests"] === true,
    logLevel: input.logLevel,
    metricsToken,
    network: networkOptionsFromEnv(process.env),
    queueMax,
  });
  console.log(`listening on ${relay.url}`);
  const stopLooking = new AbortController();
  normalJitOnceBusy(whenBusy(() => relay.relay.telemetry.answered(), stopLooking.signal));
  await new Promise<void>((done) => {
    const shutdown = async (signal: string) => {
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
      stopLooking.abort();
      await relay.stop();
      console.log(JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "stopped", signal }));
      done();
    };
    const onTerm = () => void shutdown("SIGTERM");
    const onInt = () => void shutdown("SIGINT");
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
  });
  return 0;
}
