import { type } from "arktype";
import { UsageError } from "../lib/usage-error";

export const EmailText = type("string.email");

/** Parses with arktype and turns a failure into a one-line usage error. */
export function parseOrThrow<T>(validator: (input: unknown) => T | InstanceType<typeof type.errors>, input: unknown, what: string): T {
  const result = validator(input);
  if (result instanceof type.errors) throw new UsageError(`${what}: ${result.summary}`);
  return result as T;
}
