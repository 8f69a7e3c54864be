import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { DataTable } from "../../../web/dashboard/data-table";
import { notLoaded } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { EnvSelect, Link, When, useLoad } from "../../../web/dashboard/ui";
import { type Env, REASON_WORDS, usageApi } from "./client";

const PAGE_OF = { killswitch: "/killswitches", gate: "/gates", config: "/configs" } as const;

/** Stale flags of the project, with why; an env filter. */
function StaleFlagsPage() {
  const session = useSession();
  const [env, setEnv] = useState<Env | "">("");
  const load = useLoad(() => call(usageApi.api.admin.flags.stale.get({ query: env ? { env } : {} })), [session.project.id, env]);
  const data = load.data;
  return (
    <>
      <h1>Stale flags</h1>
      <p class="muted">
        Killswitches, gates and configs that have served one value to everyone, or have not been evaluated, for {data ? data.staleAfterDays : "the project's"} days (set in Project settings, or{" "}
        <code>PATCH /api/admin/projects/{"{id}"}</code> <code>staleAfterDays</code>): candidates to remove from the code, then from svc.
      </p>
      <EnvSelect id="stale-env" value={env} empty="Every env" onChange={setEnv} />
      {notLoaded(load) ??
        (data!.flags.length === 0 ? (
          <p>No stale flags.</p>
        ) : (
          <div class="table-scroll">
            <DataTable
              caption="Stale flags and why"
              rows={data!.flags}
              rowKey={(f) => `${f.kind}/${f.name}/${f.env}`}
              rowHeader={{ header: "Name", cell: (f) => <Link href={`${PAGE_OF[f.kind]}/${encodeURIComponent(f.name)}`}>{f.name}</Link> }}
              columns={[
                { header: "Kind", cell: (f) => f.kind },
                { header: "Env", cell: (f) => f.env },
                { header: "Why", cell: (f) => f.reasons.map((r) => REASON_WORDS[r]).join("; ") },
                { header: "Last evaluated", cell: (f) => (f.lastEvaluatedAt ? <When iso={f.lastEvaluatedAt} /> : "never") },
                { header: "Last changed", cell: (f) => <When iso={f.lastChangedAt} /> },
              ]}
            />
          </div>
        ))}
    </>
  );
}

export const usageDashboard: DashboardModule = {
  pages: [{ path: "/stale-flags", title: "Stale flags", nav: { label: "Stale flags", order: 45, group: "release" }, view: StaleFlagsPage }],
};
