import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
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
        <table>
          <caption class="visually-hidden">Events per name in the last 24 hours and 7 days</caption>
          <thead>
            <tr>
              <th scope="col">Event (as sent)</th>
              <th scope="col">Last 24 h</th>
              <th scope="col">Last 7 days</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {counts.data.counts.map((c) => (
              <tr key={c.name}>
                <td class="mono">{c.name}</td>
                <td>{c.last24h.toLocaleString("en")}</td>
                <td>{c.last7d.toLocaleString("en")}</td>
                <td>
                  <button type="button" class="secondary small" aria-label={`Show raw events of ${c.name}`} aria-expanded={open === c.name} onClick={() => setOpen(open === c.name ? null : c.name)}>
                    Raw events
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
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
        <table>
          <caption class="visually-hidden">Raw events of {name} as SDK clients sent them, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Unit (as sent)</th>
              <th scope="col">Value</th>
              <th scope="col">Properties (as sent)</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e, i) => (
              <tr key={`${e.ts}-${i}`}>
                <td>
                  <When iso={e.at} />
                </td>
                <td class="mono">{e.unitId ?? <span class="muted">none</span>}</td>
                <td>{e.value ?? <span class="muted">none</span>}</td>
                <td class="mono small">{e.properties ? JSON.stringify(e.properties) : <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          Older events
        </button>
      )}
    </section>
  );
}
