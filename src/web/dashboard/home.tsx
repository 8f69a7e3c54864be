import type { DashboardModule } from "./registry";
import { useSession } from "./registry";

/** The overview shows every module's card; `modules` comes from pages.ts, which lists this module too (so it is passed, not imported). */
function overviewOf(modules: () => DashboardModule[]) {
  return function Overview() {
    const session = useSession();
    return (
      <>
        <h1>{session.project.name}</h1>
        <p class="muted">
          Signed in as {session.email}
          {session.role ? ` (${session.role})` : ""}. Press <kbd>Ctrl K</kbd> to jump to any flag or config.
        </p>
        <ul class="cards">
          {modules().filter((m) => m.overview).map((m, i) => {
            const Card = m.overview!;
            return (
              <li key={i}>
                <Card />
              </li>
            );
          })}
        </ul>
      </>
    );
  };
}

export function homeModuleOf(modules: () => DashboardModule[]): DashboardModule {
  return { pages: [{ path: "/", title: "Overview", nav: { label: "Overview", order: 0 }, view: overviewOf(modules) }] };
}
