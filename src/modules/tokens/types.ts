/** The tokens feature's own types, shared by its service and its store (the store imports no service). */
export type TokenAccess = "read-only" | "read-write";
