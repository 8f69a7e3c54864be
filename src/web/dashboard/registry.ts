import type { JSX } from "preact";
import { createContext } from "preact";
import { useContext } from "preact/hooks";

/** Who is signed in and where: what /api/admin/me says for the selected project. */
export type DashboardSession = {
  email: string;
  projects: { id: string; name: string; organisationId: string; organisationName: string }[];
  project: { id: string; name: string };
  role: "owner" | "editor" | "viewer" | null;
  permissions: string[];
};

export const SessionContext = createContext<DashboardSession | null>(null);

export function useSession(): DashboardSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside the dashboard");
  return session;
}

/** The person may write (editor, owner) / manage keys, tokens and settings (owner) in this project. */
export const can = (session: DashboardSession, permission: "write" | "manage" | "members") => session.permissions.includes(permission);

/** The sidebar's groups, by the job a person came to do, in this order; each has a heading. */
export const NAV_GROUPS = [
  { id: "release", label: "Release" },
  { id: "experiment", label: "Experiment" },
  { id: "observe", label: "Observe" },
  { id: "work", label: "Work" },
  { id: "project", label: "Project" },
] as const;
export type NavGroup = (typeof NAV_GROUPS)[number]["id"];

/**
 * What an empty list says: what the thing is for, and the command (or line of
 * code) that makes the first one; the list's own "New …" button is named beside it.
 */
export type EmptyGuide = { about: string; command?: string };

/** One page: its path pattern (`/configs/:name`), its title, and where it sits in the navigation. */
export type DashboardPage = {
  path: string;
  title: string | ((params: Record<string, string>) => string);
  /** Shown in the navigation (lower first, within its group; no group: above the groups, as the overview); detail pages have none. */
  nav?: { label: string; order: number; group?: NavGroup };
  /** A list page's words for when the project has none yet (ResourceList shows them). */
  empty?: EmptyGuide;
  view: (props: { params: Record<string, string> }) => JSX.Element;
};

/** The page being shown, for the kit (ResourceList reads its `empty` guide). */
export const PageContext = createContext<DashboardPage | null>(null);

/** Something the command palette can jump to. */
export type PaletteItem = { label: string; kind: string; href: string };

/** What a module adds to the dashboard, from its own dashboard/ folder. */
export type DashboardModule = {
  pages: DashboardPage[];
  /** Its card on the overview page. */
  overview?: () => JSX.Element;
  /** Items for the command palette (loaded when it opens). */
  palette?: () => Promise<PaletteItem[]>;
};
