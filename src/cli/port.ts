import { DEFAULT_PORT, UsageError } from "../lib/config";

/**
 * The port from a flag, else the PORT env, else 8080. A plain check rather
 * than arktype: `svc serve` uses it, and the server process stays free of
 * arktype's resident memory (see serve.ts).
 */
export function portSetting(flag: unknown, env: string | undefined): number {
  const text = typeof flag === "string" ? flag : env;
  if (text === undefined) return DEFAULT_PORT;
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--port: must be an integer from 0 to 65535 (was "${text}")`);
  return port;
}
