/** The keys feature's own types, shared by its service and its store (the store imports no service). */
export const KEY_TYPES = ["admin", "client", "server"] as const;

export type KeyType = (typeof KEY_TYPES)[number];

export type SdkKey = {
  id: string;
  projectId: string;
  type: KeyType;
  name: string;
  scopes: string[];
  allowedOrigin: string | null;
  createdAt: string;
  lastUsedAt: string | null;
};
