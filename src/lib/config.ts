import { join } from "node:path";
export { UsageError } from "./usage-error";

export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = "0.0.0.0";
export const DEFAULT_DATA_DIR = "./data";
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** `<data>/service.db`: the one file all state lives in. */
export function databasePath(dataDir: string): string {
  return join(dataDir, "service.db");
}
