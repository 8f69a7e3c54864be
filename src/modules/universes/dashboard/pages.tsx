import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Count, OverviewCard } from "../../../web/dashboard/overview-card";
import { ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { Link, RowEditDelete, When } from "../../../web/dashboard/ui";
import { type Universe, holdoutText, loadUniverses } from "./client";
import { DeleteUniverseDialog, UniverseDialog } from "./form";
import { SegmentBar } from "./segments";

/** The universes of the project: unit type, the holdout drawn over the 10,000 segments; create, edit and delete. */
function UniverseList() {
  const session = useSession();
  const writable = can(session, "write");
  const { data, error, reload } = useLiveList(loadUniverses, [session.project.id]);
  const rows = useRowDialogs<Universe>(reload);
  return (
    <ResourceList
      title="Universes"
      noun="universe"
      intro={
        <>
          A universe splits its units (users or accounts) into 10,000 segments by a salted hash of the unit id. Experiments take disjoint ranges of segments; the holdout goes to none of them.
          Changes reach SDKs with the next snapshot (see the <Link href="/audit">audit trail</Link> for who changed what).
        </>
      }
      items={data}
      error={error}
      message={rows.message}
      create={writable && { label: "New universe", onClick: rows.create }}
      searchText={(u) => [u.name]}
      caption="Universes with their unit type, holdout and when they changed"
      rowKey={(u) => u.id}
      name={(u) => u.name}
      columns={[
        { header: "Unit type", cell: (u) => u.unit_type, class: "mono" },
        {
          header: "Holdout",
          cell: (u) => (
            <>
              <div class="small">{holdoutText(u.holdout_range)}</div>
              <SegmentBar range={u.holdout_range} label={`Segments of ${u.name}`} />
            </>
          ),
        },
        { header: "Updated", cell: (u) => <When iso={u.updatedAt} /> },
      ]}
      actions={writable && ((u) => <RowEditDelete noun="universe" name={u.name} onEdit={() => rows.edit(u)} onDelete={() => rows.remove(u)} />)}
    >
      <UniverseDialog
        {...rows.dialog}
        onSaved={(saved) => rows.done(rows.closeDialog() ? `Saved universe ${saved.name}` : `Created universe ${saved.name}`)}
      />
      <DeleteUniverseDialog universe={rows.deleting} onClose={rows.closeDelete} onDeleted={(x) => rows.done(`Deleted universe ${x.name}`)} />
    </ResourceList>
  );
}

function UniversesCard() {
  return <OverviewCard load={loadUniverses} href="/universes" main={(data) => <Count n={data.length} one="universe" many="universes" />} more={(data) => `${data.filter((u) => u.holdout_range !== null).length} with a holdout`} />;
}

export const universesDashboard: DashboardModule = {
  pages: [{ path: "/universes", title: "Universes", nav: { label: "Universes", order: 49, group: "experiment" }, empty: { about: "A universe is the population experiments split (users, accounts…), with a holdout that no experiment touches.", command: "svc universes create web-users" }, view: UniverseList }],
  overview: UniversesCard,
  palette: async () => (await loadUniverses()).map((u) => ({ label: u.name, kind: "universe", href: "/universes" })),
};
