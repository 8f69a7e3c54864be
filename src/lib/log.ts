/** Structured logs: one JSON object per line on stdout (requests) or stderr (problems). */
export type Logger = {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  request(fields: Record<string, unknown>): void;
  /** Whether request lines are written: hot paths skip building them otherwise. */
  readonly requests: boolean;
};

export function createLogger(options: { requests: boolean; quiet?: boolean }): Logger {
  const write = (stream: NodeJS.WriteStream, level: string, msg: string, fields?: Record<string, unknown>) => {
    if (options.quiet && level !== "error") return;
    stream.write(`${JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
  return {
    info: (msg, fields) => write(process.stdout, "info", msg, fields),
    warn: (msg, fields) => write(process.stderr, "warn", msg, fields),
    error: (msg, fields) => write(process.stderr, "error", msg, fields),
    request: (fields) => {
      if (options.requests) write(process.stdout, "info", "request", fields);
    },
    requests: options.requests,
  };
}
