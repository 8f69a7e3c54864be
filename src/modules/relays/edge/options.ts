import type { LogLevel, LoggerOptions } from "../../../lib/log";
import type { NetworkOptions } from "../../../lib/network";

export type RelayOptions = {
  port: number;
  host: string;
  /** The relay's directory: `<dir>/relay.db` holds its snapshots, known keys and queue. */
  dataDir: string;
  /** The upstream: a `svc serve`, or another relay. */
  upstream: string;
  /** How the upstream lists this relay (`--relay-name`, SERVICE_RELAY_NAME; default the host name). */
  name?: string;
  /** A server key of the project the relay serves. */
  key: string;
  logRequests?: boolean;
  logSdkRequests?: boolean;
  logLevel?: LogLevel;
  logSink?: LoggerOptions["sink"];
  quiet?: boolean;
  metricsToken?: string;
  network?: NetworkOptions;
  maxBodyBytes?: number;
  streamHeartbeatMs?: number;
  /** How long the upstream's answer about a key is trusted (default 60 s). */
  keyTtlMs?: number;
  /** A stream silent this long is reconnected (default 45 s). */
  streamIdleMs?: number;
  /** Requests queued at most before forwarded paths answer 503 (SERVICE_RELAY_QUEUE_MAX). */
  queueMax?: number;
  /** How often the relay's own evaluation counts are queued for the upstream (default 5 s). */
  evaluationsFlushMs?: number;
};
