import { useState } from "preact/hooks";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ErrorMessage, Link, Loading, SearchBox, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { STATUSES, STATUS_TEXT, loadRollouts, positionText, rolloutHref } from "./client";
import { RolloutDetail } from "./detail";
import { NewRolloutDialog } from "./form";
import { StageBar, StatusBadge } from "./stages";

/** The rollouts of the project, newest first: subject and kind, env, status, stage bar, created; filter by text and status; start a new one. */
function RolloutList() {
  const session = useSession();
  const writable = can(session, "write");
  const [q, setQ] = useState("");
  const [status, setStatus] = useState("");
  const [creating, setCreating] = useState(false);
  // The server filters (q over the gate's or config's name, the description and the id; status).
  const { data, error, reload } = useLoad(() => loadRollouts({ ...(q.trim() ? { q: q.trim() } : {}), ...(status ? { status } : {}) }), [session.project.id, q, status]);
  useLiveReload(reload);
  const filtered = q.trim() !== "" || status !== "";
  return (
    <>
      <div class="page-head">
        <h1>Rollouts</h1>
        {writable && (
          <button type="button" onClick={() => setCreating(true)}>
            New rollout
          </button>
        )}
      </div>
      <p class="muted">
        A <Link href="/gates">gate</Link>'s new rules or a <Link href="/configs">config</Link>'s new value released in stages, the units with it compared every minute with those without on the error rate and chosen{" "}
        <Link href="/metrics">metrics</Link>: a regression pauses or rolls back by itself.
      </p>
      <div class="row filters">
        <SearchBox label="Search rollouts" value={q} onInput={setQ} />
        <label>
          Status{" "}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_TEXT[s]}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={error} />
      {!data ? (
        !error && <Loading />
      ) : data.length === 0 ? (
        <p class="muted">{filtered ? "No rollout matches these filters." : "No rollouts yet."}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Rollouts with their gate or config, env, status, stages and creation</caption>
          <thead>
            <tr>
              <th scope="col">Rolls out</th>
              <th scope="col">Env</th>
              <th scope="col">Status</th>
              <th scope="col">Stages</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {data.map((r) => (
              <tr key={r.id}>
                <th scope="row">
                  <Link href={rolloutHref(r)}>{r.subject}</Link> <span class="muted small">{r.kind}</span>
                  {r.description && <div class="muted small">{r.description}</div>}
                </th>
                <td>{r.env}</td>
                <td>
                  <StatusBadge r={r} />
                </td>
                <td>
                  <StageBar r={r} compact />
                  <div class="muted small nowrap">{positionText(r)}</div>
                </td>
                <td>
                  <When iso={r.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NewRolloutDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(r) => {
          setCreating(false);
          navigate(rolloutHref(r));
        }}
      />
    </>
  );
}

function RolloutsCard() {
  const session = useSession();
  const { data } = useLoad(() => loadRollouts(), [session.project.id]);
  if (!data) return <Loading />;
  const running = data.filter((r) => r.status === "running").length;
  const paused = data.filter((r) => r.status === "paused").length;
  return (
    <>
      <Link href="/rollouts">
        <strong>{running}</strong> {running === 1 ? "rollout" : "rollouts"} running
      </Link>
      <span class="muted">
        {paused > 0 ? ` · ${paused} paused` : ""} · {data.length === 1 ? "1 rollout" : `${data.length} rollouts`}
      </span>
    </>
  );
}

export const rolloutsDashboard: DashboardModule = {
  pages: [
    { path: "/rollouts", title: "Rollouts", nav: { label: "Rollouts", order: 52 }, view: RolloutList },
    { path: "/rollouts/:id", title: (p) => `Rollout ${p.id}`, view: ({ params }) => <RolloutDetail id={params.id!} /> },
  ],
  overview: RolloutsCard,
  palette: async () => (await loadRollouts()).map((r) => ({ label: `${r.subject} (${r.env}, ${STATUS_TEXT[r.status]})`, kind: "rollout", href: rolloutHref(r) })),
};
