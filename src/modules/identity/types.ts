/** The identity feature's own types, shared by its service and its store (the store imports no service). */
/** A viewer reads; an editor also writes; an owner also manages members, keys, tokens and settings. */
export const ROLES = ["owner", "editor", "viewer"] as const;

export type Role = (typeof ROLES)[number];

export type SignedInUser = { id: string; email: string };

export type AccessibleProject = { id: string; name: string; organisationId: string; organisationName: string };

/** A person of an organisation: a member, or someone invited who has not accepted yet (no access until they do). */
export type Member =
  | { email: string; role: Role; status: "active"; joinedAt: string }
  | { email: string; role: Role; status: "invited"; joinedAt: null; invitedAt: string; expiresAt: string };
