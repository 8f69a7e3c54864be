import { UsageError } from "./usage-error";

/** SERVICE_LOG_LEVEL: lines below it are not written. Request lines are `info`. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Structured logs: one JSON object per line on stdout (requests, info, debug) or stderr (problems). */
export type Logger = {
  /** Optional (as is `sdkRequests`) so that hand-made loggers in tests need not supply it; call as `log.debug?.(…)`. */
  debug?(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  request(fields: Record<string, unknown>): void;
  /** Whether request lines are written: hot paths skip building them otherwise. */
  readonly requests: boolean;
  /**
   * Whether SDK poll traffic (snapshot, stream connects, OFREP) that succeeded
   * is logged too (`--log-sdk-requests`). Off by default: at thousands of polls
   * a second the lines would drown every admin request; polls are counted in
   * /metrics instead, and a failed poll (status >= 400) is always logged.
   */
  readonly sdkRequests?: boolean;
};

export type LoggerOptions = {
  /** One line per request (`svc serve --no-request-log` turns it off). */
  requests: boolean;
  /** Successful SDK polls logged too (`--log-sdk-requests`, SERVICE_LOG_SDK_REQUESTS=1). */
  sdkRequests?: boolean;
  /** Default info. */
  level?: LogLevel;
  /** Errors only (tests). */
  quiet?: boolean;
  /** Where lines go instead of stdout/stderr (tests read them). */
  sink?: (line: string, stream: "stdout" | "stderr") => void;
};

/** SERVICE_LOG_LEVEL's value (unset or empty: info); anything else is a usage error that names the choices. */
export function parseLogLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === "") return "info";
  const level = value.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new UsageError(`SERVICE_LOG_LEVEL: must be one of ${LOG_LEVELS.join(", ")} (was "${value}")`);
}

export function createLogger(options: LoggerOptions): Logger {
  const threshold = LOG_LEVELS.indexOf(options.quiet ? "error" : (options.level ?? "info"));
  const enabled = (level: LogLevel) => LOG_LEVELS.indexOf(level) >= threshold;
  const sink = options.sink;
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (!enabled(level)) return;
    const json = JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields });
    const stream = level === "warn" || level === "error" ? "stderr" : "stdout";
    if (sink) sink(`${json}\n`, stream);
    // Bun's console writes a lone string as it is, buffered as process.stdout is. process.stdout's first write
    // loads Node's stream code (3 ms of the binary's cold start, when the first /healthz logged its line: issue 32).
    else if (stream === "stderr") console.error(json);
    else console.log(json);
  };
  const requests = options.requests && enabled("info");
  return {
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    request: (fields) => {
      if (requests) write("info", "request", fields);
    },
    requests,
    sdkRequests: requests && options.sdkRequests === true,
  };
}
