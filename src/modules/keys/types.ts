/** The keys feature's own types, shared by its service and its store (the store imports no service). */
import type { Env } from "../../lib/envs";

export const KEY_TYPES = ["admin", "client", "server", "browser"] as const;

export type KeyType = (typeof KEY_TYPES)[number];

export type SdkKey = {
  id: string;
  projectId: string;
  type: KeyType;
  name: string;
  scopes: string[];
  allowedOrigin: string | null;
  /** The one env a browser key evaluates; null for every other type. */
  env: Env | null;
  createdAt: string;
  lastUsedAt: string | null;
};
