import { DASHBOARD_MODULES } from "./pages";
import type { DashboardModule } from "./registry";
import { useSession } from "./registry";

function Overview() {
  const session = useSession();
  return (
    <>
      <h1>{session.project.name}</h1>
      <p class="muted">
        Signed in as {session.email}
        {session.role ? ` (${session.role})` : ""}. Press <kbd>Ctrl K</kbd> to jump to any flag or config.
      </p>
      <ul class="cards">
        {DASHBOARD_MODULES.filter((m) => m.overview).map((m, i) => {
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
}

export const homeModule: DashboardModule = {
  pages: [{ path: "/", title: "Overview", nav: { label: "Overview", order: 0 }, view: Overview }],
};
