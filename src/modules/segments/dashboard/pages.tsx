import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { DetailFrame, deleteZone, listAndDetail, notLoaded, overviewCard, useCreateThenOpen } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, When, useLoad } from "../../../web/dashboard/ui";
import { type Segment, conditionsText, idsCount, loadSegment, loadSegments, segmentApi } from "./client";
import { SegmentDialog } from "./form";

const href = (name: string) => `/segments/${encodeURIComponent(name)}`;
/** Ids the page shows of a list (it may hold 100,000). */
const SHOWN = 20;

/** The project's segments: their id count, attribute and conditions; search, and create one from a CSV file. */
function SegmentList() {
  const session = useSession();
  const { data, error } = useLiveList(loadSegments, [session.project.id]);
  const creating = useCreateThenOpen<{ name: string }>((made) => href(made.name));
  return (
    <ResourceList
      title="Segments"
      noun="segment"
      intro={
        <>
          A segment is a named set of units that <Link href="/gates">gate</Link> rules reuse with the operators in_segment and not_in_segment: a list of up to 100,000 ids on one attribute, conditions,
          or both. Changing one republishes every env whose rules name it.
        </>
      }
      items={data}
      error={error}
      create={can(session, "write") && { label: "New segment", onClick: creating.open }}
      searchText={(s) => [s.name, s.description]}
      caption="Segments with their id count, attribute and conditions"
      rowKey={(s) => s.id}
      name={(s) => <NameCell href={href(s.name)} name={s.name} description={s.description} />}
      columns={[
        { header: "Ids", cell: (s) => idsCount(s.idCount) },
        { header: "Attribute", cell: (s) => s.attribute, class: "mono" },
        { header: "Conditions", cell: (s) => conditionsText(s.conditions), class: "mono small" },
        { header: "Updated", cell: (s) => <When iso={s.updatedAt} /> },
      ]}
    >
      <SegmentDialog open={creating.dialog.open} editing={null} onClose={creating.dialog.onClose} onSaved={creating.dialog.onCreated} />
    </ResourceList>
  );
}

/** One segment: its id count and the first ids, its attribute and conditions; edit (with a CSV import) and delete. */
function SegmentDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  // The segment as it was when Edit was pressed: the dialog's form is set from it once, not at every reload.
  const [editing, setEditing] = useState<Segment | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // Read once, not every few seconds as other pages are: it carries up to 100,000 ids (about 4 MB).
  const segment = useLoad(() => loadSegment(name), [session.project.id, name]);
  const s = segment.data;
  if (!s) return notLoaded(segment);
  const rest = s.idCount - Math.min(SHOWN, s.ids.length);
  return (
    <DetailFrame
      back={{ href: "/segments", label: "Segments" }}
      title={s.name}
      description={s.description}
      meta={
        <>
          <span class="mono">{s.id}</span> · updated <When iso={s.updatedAt} />
        </>
      }
      writable={writable}
      actions={
        <button type="button" class="secondary" onClick={() => setEditing(s)}>
          Edit segment
        </button>
      }
      danger={deleteZone("segment", s.name, "Deleting it is refused while gate rules name it; the answer names them.", () => call(segmentApi.api.admin.segments({ id: s.id }).delete()))}
      message={message}
    >
      <section class="panel" aria-label="What the segment holds">
        <p>
          <strong>Ids:</strong> {idsCount(s.idCount)} on <span class="mono">{s.attribute}</span>
        </p>
        <p>
          <strong>Conditions:</strong> <span class="mono small wrap-anywhere">{conditionsText(s.conditions)}</span>
        </p>
        <p>
          <strong>In a gate rule:</strong> <span class="mono small wrap-anywhere">{JSON.stringify({ attr: s.attribute, op: "in_segment", value: s.name })}</span>
        </p>
      </section>
      {s.ids.length > 0 && (
        <>
          <h2>First ids</h2>
          <p class="mono small wrap-anywhere">
            {s.ids.slice(0, SHOWN).join(", ")}
            {rest > 0 && <span class="muted"> and {idsCount(rest)} more</span>}
          </p>
        </>
      )}
      <SegmentDialog
        open={editing !== null}
        editing={editing}
        onClose={() => setEditing(null)}
        onSaved={async (saved) => {
          setEditing(null);
          if (saved.name !== name) navigate(href(saved.name));
          else await segment.reload();
          setMessage(`Saved segment ${saved.name}`);
        }}
      />
    </DetailFrame>
  );
}

export const segmentsDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/segments", title: "Segments", order: 17, group: "release", empty: { about: "A segment is a named list of user ids (imported from a CSV) or conditions that gate rules reuse with in_segment.", command: "svc segments create beta-testers --ids-file beta.csv" }, list: SegmentList, param: "name", one: (name) => `Segment ${name}`, detail: (name) => <SegmentDetail name={name} /> }),
  overview: overviewCard(loadSegments, (all) => ({ href: "/segments", count: all.length, label: all.length === 1 ? "segment" : "segments", more: idsCount(all.reduce((n, s) => n + s.idCount, 0)) })),
  palette: async () => (await loadSegments()).map((s) => ({ label: s.name, kind: "segment", href: href(s.name) })),
};
