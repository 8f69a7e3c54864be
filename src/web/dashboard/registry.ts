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

/** One page: its path pattern (`/configs/:name`), its title, and where it sits in the navigation. */
export type DashboardPage = {
  path: string;
  title: string | ((params: Record<string, string>) => string);
  /** Shown in the navigation (lower first); detail pages have none. */
  nav?: { label: string; order: number };
  view: (props: { params: Record<string, string> }) => JSX.Element;
};

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
