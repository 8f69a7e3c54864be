import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { DataTable } from "../../../web/dashboard/data-table";
import { useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, Loading, When, useLoad } from "../../../web/dashboard/ui";
import type { eventCountRoutes } from "../routes";
import { eventApi } from "./client";

const countsApi = apiOf<ReturnType<typeof eventCountRoutes>>();
type RecentPage = NonNullable<Awaited<ReturnType<ReturnType<typeof eventApi.api.admin.events>["recent"]["get"]>>["data"]>;

/**
 * What arrived: events per name over the last 24 hours and 7 days, and a
 * name's newest raw events with their properties, paged. Names, unit ids and
 * properties are what SDK clients sent: shown as text (never markup) and
 * labelled as sent by clients.
 */
export function EventActivity() {
  const session = useSession();
  const counts = useLoad(() => call(countsApi.api.admin["event-counts"].get()), [session.project.id]);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section aria-labelledby="event-activity">
      <h2 id="event-activity">Arrivals</h2>
      <p class="muted small">Events per name in whole UTC hours, from the hourly roll-ups. Names and properties below are what SDK clients sent.</p>
      <ErrorMessage error={counts.error} />
      {!counts.data ? (
        !counts.error && <Loading />
      ) : counts.data.counts.length === 0 ? (
        <p class="muted">No events arrived in the last 7 days.</p>
      ) : (
        <DataTable
          caption="Events per name in the last 24 hours and 7 days"
          rows={counts.data.counts}
          rowKey={(c) => c.name}
          columns={[
            { header: "Event (as sent)", class: "mono", cell: (c) => c.name },
            { header: "Last 24 h", cell: (c) => c.last24h.toLocaleString("en") },
            { header: "Last 7 days", cell: (c) => c.last7d.toLocaleString("en") },
          ]}
          actions={(c) => (
            <button type="button" class="secondary small" aria-label={`Show raw events of ${c.name}`} aria-expanded={open === c.name} onClick={() => setOpen(open === c.name ? null : c.name)}>
              Raw events
            </button>
          )}
        />
      )}
      {open && <RawEvents key={open} name={open} />}
    </section>
  );
}

/** A name's newest raw events, 25 a page; "Older" follows the answer's `next`. */
function RawEvents({ name }: { name: string }) {
  const [pages, setPages] = useState<RecentPage[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = async (before?: string) => {
    try {
      const page = await call(eventApi.api.admin.events({ id: name }).recent.get({ query: { limit: "25", before } }));
      setPages((p) => (before ? [...p, page] : [page]));
      setError(null);
    } catch (err) {
      setError(describeError(err));
    }
  };
  const first = useLoad(() => load(), [name]);
  const events = pages.flatMap((p) => p.events);
  const next = pages.at(-1)?.next ?? null;
  return (
    <section aria-labelledby="raw-events">
      <h3 id="raw-events">
        Raw events of <span class="mono">{name}</span>, newest first
      </h3>
      <ErrorMessage error={error ?? first.error} />
      {pages.length === 0 ? (
        !error && <Loading />
      ) : events.length === 0 ? (
        <p class="muted">No events of {name} are stored (all past the project's retention).</p>
      ) : (
        <DataTable
          caption={`Raw events of ${name} as SDK clients sent them, newest first`}
          rows={events.map((e, i) => ({ ...e, key: `${e.ts}-${i}` }))}
          rowKey={(e) => e.key}
          columns={[
            { header: "When", cell: (e) => <When iso={e.at} /> },
            { header: "Unit (as sent)", class: "mono", cell: (e) => e.unitId ?? <span class="muted">none</span> },
            { header: "Value", cell: (e) => e.value ?? <span class="muted">none</span> },
            { header: "Properties (as sent)", class: "mono small", cell: (e) => (e.properties ? JSON.stringify(e.properties) : <span class="muted">none</span>) },
          ]}
        />
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          Older events
        </button>
      )}
    </section>
  );
}
