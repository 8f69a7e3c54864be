import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { identityRoutes } from "../../modules/identity/routes";
import { apiOf, call, csrfToken, currentProject, describeError, selectProject } from "./api";
import { DASHBOARD_MODULES } from "./pages";
import { CommandPalette } from "./palette";
import { type DashboardPage, type DashboardSession, NAV_GROUPS, PageContext, SessionContext } from "./registry";
import { matchPath, navigate, useLocation } from "./router";
import { ThemeToggle } from "./theme";
import { ErrorMessage, Link, Loading } from "./ui";

const identityApi = apiOf<ReturnType<typeof identityRoutes>>();

const PAGES: DashboardPage[] = DASHBOARD_MODULES.flatMap((m) => m.pages);
const NAV = PAGES.filter((p) => p.nav).sort((a, b) => a.nav!.order - b.nav!.order);
/** The sidebar: pages with no group first (the overview), then each group under its heading, as the manifests declare them. */
const NAV_SECTIONS: { id: string; label: string | null; pages: DashboardPage[] }[] = [
  { id: "top", label: null, pages: NAV.filter((p) => !p.nav!.group) },
  ...NAV_GROUPS.map((g) => ({ id: g.id, label: g.label, pages: NAV.filter((p) => p.nav!.group === g.id) })),
].filter((s) => s.pages.length > 0);

function findPage(path: string): { page: DashboardPage; params: Record<string, string> } | null {
  for (const page of PAGES) {
    const params = matchPath(page.path, path);
    if (params) return { page, params };
  }
  return null;
}

/**
 * A table wider than the screen scrolls inside its own box (styles.css); while it does, the box takes keyboard focus
 * so the arrow keys can scroll it too (WCAG 2.1.1). Pages need not know: the shell marks them after each change.
 */
function useFocusableScrollBoxes(): void {
  useEffect(() => {
    let frame = 0;
    const mark = () => {
      frame = 0;
      for (const el of Array.from(document.querySelectorAll<HTMLElement>("main table, main .table-scroll"))) {
        if (el.closest(".visually-hidden")) continue;
        const scrolls = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible";
        if (scrolls && !el.hasAttribute("tabindex")) {
          el.setAttribute("tabindex", "0");
          el.dataset.scrollFocus = "";
        } else if (!scrolls && el.dataset.scrollFocus !== undefined) {
          el.removeAttribute("tabindex");
          delete el.dataset.scrollFocus;
        }
      }
    };
    const later = () => {
      if (!frame) frame = requestAnimationFrame(mark);
    };
    // Marked in the observer's own microtask, not a frame later: a table that a page's fetch draws is focusable before any
    // other task (a keypress, an audit tool) can meet it unmarked.
    const observer = new MutationObserver(mark);
    observer.observe(document.body, { childList: true, subtree: true });
    window.addEventListener("resize", later);
    later();
    return () => {
      observer.disconnect();
      window.removeEventListener("resize", later);
      cancelAnimationFrame(frame);
    };
  }, []);
}

/** Reads /me for the selected project (or the first one the person reaches). */
async function loadSession(): Promise<DashboardSession | { email: string; noProjects: true }> {
  const everything = await call(identityApi.api.admin.me.get({ headers: { "x-project-id": "" } }));
  const chosen = everything.projects.find((p) => p.id === currentProject()) ?? everything.projects[0];
  if (!chosen) return { email: everything.user.email, noProjects: true };
  selectProject(chosen.id);
  const me = await call(identityApi.api.admin.me.get());
  return {
    email: me.user.email,
    projects: everything.projects,
    project: me.project ?? { id: chosen.id, name: chosen.name },
    role: me.credential.role,
    permissions: me.credential.permissions,
  };
}

function ProjectSwitcher({ session, onSwitch }: { session: DashboardSession; onSwitch: (id: string) => void }) {
  if (session.projects.length < 2) return <span class="project-name">{session.project.name}</span>;
  return (
    <select aria-label="Project" value={session.project.id} onChange={(e) => onSwitch((e.target as HTMLSelectElement).value)}>
      {session.projects.map((p) => (
        <option key={p.id} value={p.id}>
          {p.name} ({p.organisationName})
        </option>
      ))}
    </select>
  );
}

export function App() {
  const location = useLocation();
  const [session, setSession] = useState<DashboardSession | null>(null);
  const [noProjects, setNoProjects] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [generation, setGeneration] = useState(0);
  useFocusableScrollBoxes();
  // The sidebar as a drawer on narrow screens (below 720 px the CSS hides it until the menu button opens it).
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const navRef = useRef<HTMLElement>(null);
  const headerRef = useRef<HTMLElement>(null);
  // The drawer opens below the header (whose height depends on how its controls wrap), so the menu button stays in reach.
  const [drawerTop, setDrawerTop] = useState(0);

  useEffect(() => {
    loadSession()
      .then((s) => ("noProjects" in s ? setNoProjects(s.email) : setSession(s)))
      .catch((err) => setError(describeError(err)));
  }, [generation]);

  // Ctrl+K / Cmd+K opens the palette from anywhere; "/" too, unless typing.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = e.target instanceof HTMLElement && (e.target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName));
      if ((e.key === "k" && (e.ctrlKey || e.metaKey)) || (e.key === "/" && !typing)) {
        e.preventDefault();
        setPaletteOpen(true);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // Escape closes the drawer and hands focus back to its button; going to a page closes it.
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || document.querySelector("dialog[open]")) return;
      setMenuOpen(false);
      menuButton.current?.focus();
    };
    window.addEventListener("keydown", onKey);
    // Focus goes into the drawer: to the current page's link, else the first.
    const links = navRef.current?.querySelectorAll<HTMLAnchorElement>("a");
    (navRef.current?.querySelector<HTMLAnchorElement>('a[aria-current="page"]') ?? links?.[0])?.focus();
    return () => window.removeEventListener("keydown", onKey);
  }, [menuOpen]);
  useEffect(() => setMenuOpen(false), [location.pathname]);

  const found = useMemo(() => findPage(location.pathname), [location.pathname]);
  // The section the page belongs to: the longest navigation path the URL starts with (/gates/templates, not /gates).
  const currentNav = useMemo(() => {
    const path = location.pathname;
    const matching = NAV.filter((p) => (p.path === "/" ? path === "/" : path === p.path || path.startsWith(`${p.path}/`)));
    return matching.sort((a, b) => b.path.length - a.path.length)[0]?.path ?? null;
  }, [location.pathname]);
  const title = found ? (typeof found.page.title === "function" ? found.page.title(found.params) : found.page.title) : "Not found";
  useEffect(() => {
    document.title = `${title} · svc`;
  }, [title]);

  if (error) return <ErrorMessage error={error} />;
  if (noProjects) {
    return (
      <main id="main" class="narrow">
        <h1>No projects yet</h1>
        <p>You are signed in as {noProjects}, but no organisation has added you to a project. Ask an owner to invite you.</p>
      </main>
    );
  }
  if (!session) return <Loading />;

  const switchProject = (id: string) => {
    selectProject(id);
    setSession(null);
    setGeneration((g) => g + 1);
  };

  return (
    <SessionContext.Provider value={session}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top" ref={headerRef}>
        <button
          type="button"
          ref={menuButton}
          class="secondary small menu-button"
          aria-expanded={menuOpen}
          aria-controls="sections"
          onClick={() => {
            setDrawerTop(Math.max(0, headerRef.current?.getBoundingClientRect().bottom ?? 0));
            setMenuOpen((open) => !open);
          }}
        >
          Menu
        </button>
        <Link href="/" class="brand" aria-label="svc home">
          svc
        </Link>
        <ProjectSwitcher session={session} onSwitch={switchProject} />
        <button type="button" class="secondary palette-button" onClick={() => setPaletteOpen(true)} aria-keyshortcuts="Control+K">
          Search <kbd>Ctrl K</kbd>
        </button>
        <span class="spacer" />
        <ThemeToggle />
        <Link href="/account" class="account" aria-label={`Account: ${session.email}`}>
          {session.email}
        </Link>
        <form method="post" action="/auth/logout">
          <input type="hidden" name="csrf" value={csrfToken()} />
          <button type="submit" class="secondary small">
            Sign out
          </button>
        </form>
      </header>
      <div class="layout">
        {menuOpen && <div class="nav-backdrop" style={{ top: `${drawerTop}px` }} onClick={() => setMenuOpen(false)} />}
        <nav
          id="sections"
          ref={navRef}
          aria-label="Sections"
          class={menuOpen ? "open" : undefined}
          style={menuOpen ? { top: `${drawerTop}px` } : undefined}
          onFocusOut={(e) => {
            // Tabbing out of the open drawer closes it (it covers the page).
            const to = e.relatedTarget as Node | null;
            if (menuOpen && to && !navRef.current?.contains(to) && to !== menuButton.current) setMenuOpen(false);
          }}
        >
          {NAV_SECTIONS.map((section) => {
            const list = (
              <ul>
                {section.pages.map((p) => (
                  <li key={p.path}>
                    <Link href={p.path} aria-current={p.path === currentNav ? "page" : undefined}>
                      {p.nav!.label}
                    </Link>
                  </li>
                ))}
              </ul>
            );
            if (!section.label) return <div key={section.id}>{list}</div>;
            return (
              <div key={section.id} role="group" aria-labelledby={`nav-${section.id}`} class="nav-group">
                <h2 id={`nav-${section.id}`} class="nav-heading">
                  {section.label}
                </h2>
                {list}
              </div>
            );
          })}
        </nav>
        <main id="main" tabIndex={-1} key={`${session.project.id}:${location.pathname}`}>
          {found ? (
            <PageContext.Provider value={found.page}>
              <found.page.view params={found.params} />
            </PageContext.Provider>
          ) : (
            <>
              <h1>Page not found</h1>
              <p>
                Nothing lives at <code>{location.pathname}</code>. <Link href="/">Go to the overview</Link>.
              </p>
            </>
          )}
        </main>
      </div>
      <CommandPalette
        open={paletteOpen}
        onClose={() => setPaletteOpen(false)}
        modules={DASHBOARD_MODULES}
        pages={NAV}
        onGo={(href) => {
          setPaletteOpen(false);
          navigate(href);
        }}
      />
    </SessionContext.Provider>
  );
}
