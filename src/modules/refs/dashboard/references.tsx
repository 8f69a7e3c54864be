import { apiOf, call } from "../../../web/dashboard/api";
import { DataTable } from "../../../web/dashboard/data-table";
import { useSession } from "../../../web/dashboard/registry";
import { Badge, ErrorMessage, Loading, When, useLoad } from "../../../web/dashboard/ui";
import { REASON_WORDS, usageApi } from "../../usage/dashboard/client";
import type { refRoutes } from "../routes";

const refsApi = apiOf<ReturnType<typeof refRoutes>>();
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * "Code references" on a killswitch, gate or config page: per pushed repository its commit and
 * count, then every file:line. File and repository names come from the pushed code: shown as
 * text only (Preact escapes them). "No references" when repositories were pushed and none names it.
 */
export function CodeReferences({ name }: { name: string }) {
  const session = useSession();
  const load = useLoad(() => call(refsApi.api.admin.refs.get({ query: { flag: name } })), [session.project.id, name]);
  const data = load.data;
  // "Safe to delete": stale on some env (the stale-flags list) and no reference in any pushed repository.
  const stale = useLoad(() => call(usageApi.api.admin.flags.stale.get({ query: {} })), [session.project.id, name]);
  const staleHere = stale.data?.flags.filter((f) => f.name === name) ?? [];
  return (
    <section class="panel" aria-labelledby="code-refs-heading">
      <h2 id="code-refs-heading">Code references</h2>
      <ErrorMessage error={load.error} />
      {!data ? (
        !load.error && <Loading />
      ) : data.reposPushed === 0 ? (
        <p class="muted small">
          No repository has pushed references yet. Run <code>svc refs push</code> in a repository to see where {name} is used.
        </p>
      ) : data.total === 0 ? (
        <p>
          <Badge tone="ok">no references</Badge> <span class="muted small">in {plural(data.reposPushed, "pushed repository", "pushed repositories")}.</span>
          {staleHere.length > 0 && (
            <>
              {" "}
              <Badge tone="ok">safe to delete</Badge>{" "}
              <span class="muted small">
                stale on {staleHere.map((f) => `${f.env} (${f.reasons.map((r) => REASON_WORDS[r as keyof typeof REASON_WORDS] ?? r).join(", ").toLowerCase()})`).join(", ")}
              </span>
            </>
          )}
        </p>
      ) : (
        <>
          <ul class="small">
            {data.repos.map((r) => (
              <li key={r.repo}>
                <strong class="mono">{r.repo}</strong>: {plural(r.count, "reference", "references")} at <code>{r.commit.slice(0, 12)}</code>
                {r.branch ? ` (${r.branch})` : ""}, pushed <When iso={r.pushedAt} />
              </li>
            ))}
          </ul>
          <DataTable
            caption={`Where ${name} is used${data.truncated ? ` (first ${data.refs.length} of ${data.total})` : ""}`}
            captionShown={data.truncated}
            rows={data.refs}
            rowKey={(r) => `${r.repo}\u0000${r.file}\u0000${r.line}\u0000${r.kind}`}
            rowHeader={{ header: "File", class: "mono", cell: (r) => `${r.file}:${r.line}` }}
            columns={[
              { header: "Repository", cell: (r) => r.repo },
              { header: "Kind", cell: (r) => (r.kind === "sdk" ? "SDK call" : "string") },
            ]}
          />
        </>
      )}
    </section>
  );
}
