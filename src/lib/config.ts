import { type } from "arktype";
import { join } from "node:path";

/** A TCP port given as text (flag or env). */
export const PortText = type("string.integer.parse").to("0 <= number.integer <= 65535");

export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = "0.0.0.0";
export const DEFAULT_DATA_DIR = "./data";
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export const EmailText = type("string.email");

/** `<data>/service.db`: the one file all state lives in. */
export function databasePath(dataDir: string): string {
  return join(dataDir, "service.db");
}

/** Parses with arktype and turns a failure into a one-line usage error. */
export function parseOrThrow<T>(validator: (input: unknown) => T | InstanceType<typeof type.errors>, input: unknown, what: string): T {
  const result = validator(input);
  if (result instanceof type.errors) throw new UsageError(`${what}: ${result.summary}`);
  return result as T;
}

/** A mistake in how the CLI was called: printed plainly, exit status 2. */
export class UsageError extends Error {}
