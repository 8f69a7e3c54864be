import { call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Count, OverviewCard } from "../../../web/dashboard/overview-card";
import { NameCell, ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { Badge, ConfirmDialog, Link, RowEditDelete, When } from "../../../web/dashboard/ui";
import { type CatalogEvent, eventApi, loadCatalog } from "./client";
import { EventActivity } from "./activity";
import { EventDialog } from "./form";

/**
 * The event catalog: events people registered and names ingest discovered
 * (pending until approved), with their properties and when ingest last
 * carried them. Register, approve, edit and delete.
 */
function EventList() {
  const session = useSession();
  const writable = can(session, "write");
  const { data, error: loadError, reload } = useLiveList(loadCatalog, [session.project.id]);
  const rows = useRowDialogs<CatalogEvent>(reload);
  const pending = data?.filter((e) => e.pending === 1).length ?? 0;

  const approve = async (e: CatalogEvent) => {
    await call(eventApi.api.admin.events.post({ name: e.name }));
    await rows.done(`Approved ${e.name}: metrics can use it`);
  };

  return (
    <ResourceList
      title="Events"
      noun="event"
      intro={
        <>
          The events SDKs send (<code>POST /api/sdk/v1/events</code>) and <Link href="/metrics">metrics</Link> measure. A name nobody registered shows up as pending until approved.
        </>
      }
      afterSearch={pending > 0 && <p>{pending === 1 ? "1 event is pending approval." : `${pending} events are pending approval.`}</p>}
      items={data}
      error={loadError ?? rows.error}
      message={rows.message}
      create={writable && { label: "Register event", onClick: rows.create }}
      searchText={(e) => [e.name, e.folder, e.description]}
      empty="No events yet: register one, or send one with a server key."
      caption="Events of the catalog with their folder, properties, status and when ingest last carried them"
      rowKey={(e) => e.id}
      name={(e) => <NameCell name={<span class="mono">{e.name}</span>} description={e.description} />}
      columns={[
        { header: "Folder", cell: (e) => e.folder || <span class="muted">none</span> },
        {
          header: "Properties",
          class: "small",
          cell: (e) =>
            e.properties.length === 0 ? (
              <span class="muted">none</span>
            ) : (
              e.properties.map((p, i) => (
                <span key={p.name}>
                  {i > 0 && ", "}
                  <span class="mono">{p.name}</span>: {p.type}
                  {p.required ? " (required)" : ""}
                </span>
              ))
            ),
        },
        { header: "Status", cell: (e) => (e.pending === 1 ? <Badge tone="danger">pending</Badge> : <Badge tone="ok">registered</Badge>) },
        { header: "Last seen", cell: (e) => <When iso={e.lastSeenAt} /> },
      ]}
      actions={
        writable &&
        ((e) => (
          <RowEditDelete noun="event" name={e.name} onEdit={() => rows.edit(e)} onDelete={() => rows.remove(e)}>
            {e.pending === 1 && (
              <button type="button" class="small" aria-label={`Approve event ${e.name}`} onClick={() => approve(e).catch((err) => rows.setError(describeError(err)))}>
                Approve
              </button>
            )}
          </RowEditDelete>
        ))
      }
    >
      <EventDialog
        {...rows.dialog}
        onSaved={(saved) => rows.done(`${rows.closeDialog() ? "Saved" : "Registered"} event ${saved.name}`)}
      />
      <ConfirmDialog
        open={rows.deleting !== null}
        title={`Delete ${rows.deleting?.name ?? ""}?`}
        message={<p>It leaves the catalog; stored events stay. Metrics that measure it stop computing until re-saved, and the next one sent makes it pending again.</p>}
        confirmLabel="Delete event"
        danger
        onConfirm={async () => {
          const gone = rows.deleting!;
          await call(eventApi.api.admin.events({ id: gone.id }).delete());
          await rows.done(`Deleted event ${gone.name}`);
        }}
        onClose={rows.closeDelete}
      />
      <EventActivity />
    </ResourceList>
  );
}

function EventsCard() {
  const pending = (data: CatalogEvent[]) => data.filter((e) => e.pending === 1).length;
  return <OverviewCard load={loadCatalog} href="/events" main={(data) => <Count n={data.length - pending(data)} one="event" many="events" />} more={(data) => `${pending(data)} pending approval`} />;
}

export const eventsDashboard: DashboardModule = {
  pages: [{ path: "/events", title: "Events", nav: { label: "Events", order: 40, group: "observe" }, empty: { about: "Events are what your code reports with svc.track() (a purchase, a signup); metrics count them.", command: "svc events create checkout.completed" }, view: EventList }],
  overview: EventsCard,
};
