import { useState } from "preact/hooks";
import type { Env } from "../../../lib/envs";
import { apiOf, call } from "../../../web/dashboard/api";
import { DataTable, FactsTable } from "../../../web/dashboard/data-table";
import { notLoaded } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { CopyButton, EnvSelect, Link, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import type { growthbookAdminRoutes } from "../admin-routes";

const growthbookApi = apiOf<ReturnType<typeof growthbookAdminRoutes>>();

const NUMBER = new Intl.NumberFormat("en");

/**
 * What GrowthBook's SDKs get from this server on an env (GET /api/admin/growthbook): the payload's counts, the
 * constructs that do not map with what is served instead, and where the SDKs connect. Read-only.
 */
function GrowthbookPage() {
  const session = useSession();
  const [env, setEnv] = useState<Env | "">("");
  const load = useLoad(() => call(growthbookApi.api.admin.growthbook.get({ query: env ? { env } : {} })), [session.project.id, env]);
  // A publish changes what the SDKs get: follow it, as the lists do.
  useLiveReload(load.reload);
  const data = load.data;
  const features = `${location.origin}/api/features/<server SDK key>`;
  return (
    <>
      <h1>GrowthBook SDKs</h1>
      <p class="muted">
        GrowthBook's SDKs (JavaScript, React, Node, Python, Go, Java, Kotlin, Swift, Ruby, PHP, C#, Elixir, Flutter) evaluate this project's flags locally, with svc's buckets. A construct they cannot
        evaluate as svc does is served differently: this page lists each, and what they get instead.
      </p>
      <EnvSelect id="growthbook-env" value={env} empty="Project default" onChange={setEnv} />
      {notLoaded(load) ?? (
        <>
          <section class="panel" aria-labelledby="growthbook-payload">
            <h2 id="growthbook-payload">What they load on {data!.env}</h2>
            <FactsTable
              caption={`The GrowthBook payload on ${data!.env}`}
              rows={[
                ["Env", data!.env],
                ["Revision", String(data!.revision)],
                ["Features", NUMBER.format(data!.features)],
                ["Saved groups", NUMBER.format(data!.savedGroups)],
                ["Size", `${NUMBER.format(data!.payloadBytes)} bytes`],
              ]}
            />
          </section>
          <section class="panel" aria-labelledby="growthbook-unmapped">
            <h2 id="growthbook-unmapped">What does not map</h2>
            {data!.unmapped.length === 0 ? (
              <p>Everything maps: GrowthBook's SDKs evaluate every flag on {data!.env} as svc does.</p>
            ) : (
              <div class="table-scroll">
                <DataTable
                  caption={`Constructs GrowthBook's SDKs cannot evaluate as svc does on ${data!.env}`}
                  rows={data!.unmapped}
                  rowKey={(u) => `${u.feature}\n${u.construct}`}
                  rowHeader={{ header: "Feature", cell: (u) => u.feature }}
                  columns={[
                    { header: "Construct", cell: (u) => u.construct },
                    { header: "Served instead", cell: (u) => u.served },
                  ]}
                />
              </div>
            )}
          </section>
          <section class="panel" aria-labelledby="growthbook-connect">
            <h2 id="growthbook-connect">Connect</h2>
            <p>
              Set <code>apiHost</code> to <code>{location.origin}</code> and <code>clientKey</code> to an SDK key. Use a server SDK key (make one on the <Link href="/keys">SDK keys</Link> page): a browser key
              works only with <code>remoteEval: true</code>.
            </p>
            <FactsTable
              caption="Where GrowthBook's SDKs connect"
              rows={[
                ["Feature endpoint", <code key="f">{data!.paths.features}</code>],
                ["Stream endpoint", <code key="s">{data!.paths.stream}</code>],
              ]}
            />
            <div class="row">
              <code>{features}</code>
              <CopyButton text={features} label="Copy the feature endpoint" />
            </div>
          </section>
        </>
      )}
    </>
  );
}

export const growthbookDashboard: DashboardModule = {
  pages: [{ path: "/growthbook", title: "GrowthBook SDKs", nav: { label: "GrowthBook SDKs", order: 62, group: "project" }, view: GrowthbookPage }],
};
