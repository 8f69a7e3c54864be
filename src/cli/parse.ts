import { type } from "arktype";
import { UsageError } from "../lib/usage-error";

/** A TCP port given as text (flag or env). */
export const PortText = type("string.integer.parse").to("0 <= number.integer <= 65535");
export const EmailText = type("string.email");

/** Parses with arktype and turns a failure into a one-line usage error. */
export function parseOrThrow<T>(validator: (input: unknown) => T | InstanceType<typeof type.errors>, input: unknown, what: string): T {
  const result = validator(input);
  if (result instanceof type.errors) throw new UsageError(`${what}: ${result.summary}`);
  return result as T;
}
