import { useState } from "preact/hooks";
import { countOf, listAndDetail, overviewCard, useCreateThenOpen } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { FilterSelect, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, When } from "../../../web/dashboard/ui";
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
  const create = useCreateThenOpen(rolloutHref);
  // The server filters (q over the gate's or config's name, the description and the id; status).
  const { data, error } = useLiveList(() => loadRollouts({ ...(q.trim() ? { q: q.trim() } : {}), ...(status ? { status } : {}) }), [session.project.id, q, status]);
  const filtered = q.trim() !== "" || status !== "";
  return (
    <ResourceList
      title="Rollouts"
      noun="rollout"
      intro={
        <>
          A <Link href="/gates">gate</Link>'s new rules or a <Link href="/configs">config</Link>'s new value released in stages, the units with it compared every minute with those without on the error rate and chosen{" "}
          <Link href="/metrics">metrics</Link>: a regression pauses or rolls back by itself.
        </>
      }
      search={{ value: q, onInput: setQ }}
      filtersClass="row filters"
      filters={<FilterSelect label="Status" value={status} onChange={setStatus} options={STATUSES.map((s) => ({ value: s, text: STATUS_TEXT[s] }))} />}
      items={data}
      error={error}
      create={writable && { label: "New rollout", onClick: create.open }}
      empty={filtered ? "No rollout matches these filters." : "No rollouts yet."}
      caption="Rollouts with their gate or config, env, status, stages and creation"
      rowKey={(r) => r.id}
      nameHeader="Rolls out"
      name={(r) => (
        <>
          <Link href={rolloutHref(r)}>{r.subject}</Link> <span class="muted small">{r.kind}</span>
          {r.description && <div class="muted small">{r.description}</div>}
        </>
      )}
      columns={[
        { header: "Env", cell: (r) => r.env },
        { header: "Status", cell: (r) => <StatusBadge r={r} /> },
        {
          header: "Stages",
          cell: (r) => (
            <>
              <StageBar r={r} compact />
              <div class="muted small nowrap">{positionText(r)}</div>
            </>
          ),
        },
        { header: "Created", cell: (r) => <When iso={r.createdAt} /> },
      ]}
    >
      <NewRolloutDialog {...create.dialog} />
    </ResourceList>
  );
}

export const rolloutsDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/rollouts", title: "Rollouts", order: 52, group: "release", empty: { about: "A rollout raises a gate to more people in stages, and rolls back on its own when a guard metric gets worse.", command: "svc rollouts create --gate new-checkout --rules-file rules.json --env prod --metric checkout-conversion:higher:2%" }, list: RolloutList, param: "id", one: (id) => `Rollout ${id}`, detail: (id) => <RolloutDetail id={id} /> }),
  overview: overviewCard(loadRollouts, (list) => {
    const running = list.filter((r) => r.status === "running").length;
    const paused = list.filter((r) => r.status === "paused").length;
    return { href: "/rollouts", count: running, label: `${running === 1 ? "rollout" : "rollouts"} running`, more: `${paused > 0 ? `${paused} paused · ` : ""}${countOf(list.length, "rollout")}` };
  }),
  palette: async () => (await loadRollouts()).map((r) => ({ label: `${r.subject} (${r.env}, ${STATUS_TEXT[r.status]})`, kind: "rollout", href: rolloutHref(r) })),
};
