import { useState } from "preact/hooks";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, Link, Loading, RowEditDelete, SearchBox, Status, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { type Universe, holdoutText, loadUniverses } from "./client";
import { DeleteUniverseDialog, UniverseDialog } from "./form";
import { SegmentBar } from "./segments";

/** The universes of the project: unit type, the holdout drawn over the 10,000 segments; create, edit and delete. */
function UniverseList() {
  const session = useSession();
  const writable = can(session, "write");
  const [q, setQ] = useState("");
  const [dialog, setDialog] = useState<{ editing: Universe | null } | null>(null);
  const [deleting, setDeleting] = useState<Universe | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const { data, error, reload } = useLoad(loadUniverses, [session.project.id]);
  useLiveReload(reload);
  const needle = q.toLowerCase();
  const shown = data?.filter((u) => !q || u.name.toLowerCase().includes(needle));
  return (
    <>
      <div class="page-head">
        <h1>Universes</h1>
        {writable && (
          <button type="button" onClick={() => setDialog({ editing: null })}>
            New universe
          </button>
        )}
      </div>
      <p class="muted">
        A universe splits its units (users or accounts) into 10,000 segments by a salted hash of the unit id. Experiments take disjoint ranges of segments; the holdout goes to none of them.
        Changes reach SDKs with the next snapshot (see the <Link href="/audit">audit trail</Link> for who changed what).
      </p>
      <SearchBox label="Search universes" value={q} onInput={setQ} />
      <ErrorMessage error={error} />
      <Status message={message} />
      {!data ? (
        !error && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? "No universes yet." : `No universe matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Universes with their unit type, holdout and when they changed</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Unit type</th>
              <th scope="col">Holdout</th>
              <th scope="col">Updated</th>
              {writable && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {shown!.map((u) => (
              <tr key={u.id}>
                <th scope="row">{u.name}</th>
                <td class="mono">{u.unit_type}</td>
                <td>
                  <div class="small">{holdoutText(u.holdout_range)}</div>
                  <SegmentBar range={u.holdout_range} label={`Segments of ${u.name}`} />
                </td>
                <td>
                  <When iso={u.updatedAt} />
                </td>
                {writable && (
                  <td>
                    <RowEditDelete noun="universe" name={u.name} onEdit={() => setDialog({ editing: u })} onDelete={() => setDeleting(u)} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <UniverseDialog
        open={dialog !== null}
        editing={dialog?.editing ?? null}
        onClose={() => setDialog(null)}
        onSaved={async (saved) => {
          const editing = dialog?.editing;
          setDialog(null);
          await reload();
          setMessage(editing ? `Saved universe ${saved.name}` : `Created universe ${saved.name}`);
        }}
      />
      <DeleteUniverseDialog
        universe={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={async (u) => {
          await reload();
          setMessage(`Deleted universe ${u.name}`);
        }}
      />
    </>
  );
}

function UniversesCard() {
  const session = useSession();
  const { data } = useLoad(loadUniverses, [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href="/universes">
        <strong>{data.length}</strong> {data.length === 1 ? "universe" : "universes"}
      </Link>
      <span class="muted"> · {data.filter((u) => u.holdout_range !== null).length} with a holdout</span>
    </>
  );
}

export const universesDashboard: DashboardModule = {
  pages: [{ path: "/universes", title: "Universes", nav: { label: "Universes", order: 49 }, view: UniverseList }],
  overview: UniversesCard,
  palette: async () => (await loadUniverses()).map((u) => ({ label: u.name, kind: "universe", href: "/universes" })),
};
