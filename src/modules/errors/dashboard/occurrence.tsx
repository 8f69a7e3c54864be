import { DataTable, FactsTable } from "../../../web/dashboard/data-table";
import { When } from "../../../web/dashboard/ui";
import type { errorApi } from "./client";

// Where an error broke (issue 27, item 2): the latest kept occurrence's frames, in-app ones first and open,
// the others folded; its source lines, tags, release, environment and unit; then the other kept occurrences.
// Everything here is text an SDK sent (untrusted): Preact renders it as text, never as markup or links.

type Detail = NonNullable<Awaited<ReturnType<ReturnType<typeof errorApi.api.admin.errors>["get"]>>["data"]>;
type Occurrence = Detail["occurrences"][number];
type Frame = Occurrence["frames"][number];

/** `file:line:col` (or the module when there is no file). */
function whereOf(f: Frame): string {
  const file = f.filename ?? f.absPath ?? f.module ?? "unknown file";
  return f.lineno === undefined ? file : `${file}:${f.lineno}${f.colno === undefined ? "" : `:${f.colno}`}`;
}

/** The source lines around a frame's line, numbered, the line itself marked; focusable, since it may scroll sideways. */
function Source({ frame }: { frame: Frame }) {
  if (frame.contextLine === undefined) return null;
  const pre = frame.preContext ?? [];
  const post = frame.postContext ?? [];
  const at = frame.lineno;
  const width = String((at ?? 0) + post.length).length;
  const number = (offset: number) => (at === undefined ? "" : String(at + offset).padStart(width, " "));
  return (
    <pre class="value small" tabIndex={0} role="group" aria-label={at === undefined ? "Source around the line" : `Source around line ${at}`}>
      {pre.map((l, i) => `  ${number(i - pre.length)}  ${l}\n`).join("")}
      <strong>{`→ ${number(0)}  ${frame.contextLine}`}</strong>
      {post.map((l, i) => `\n  ${number(i + 1)}  ${l}`).join("")}
    </pre>
  );
}

function FrameItem({ frame }: { frame: Frame }) {
  return (
    <li>
      <span class="mono">{frame.function ?? "(anonymous)"}</span> <span class="muted small mono">{whereOf(frame)}</span>
      {frame.absPath && <span class="muted small"> ({frame.absPath})</span>}
      <Source frame={frame} />
    </li>
  );
}

function Frames({ occurrence }: { occurrence: Occurrence }) {
  // Frames the SDK did not mark (inApp absent) are shown open: only those it said are not ours are folded.
  const ours = occurrence.frames.filter((f) => f.inApp !== false);
  const others = occurrence.frames.filter((f) => f.inApp === false);
  if (occurrence.frames.length === 0) return <p class="muted">No stack trace was sent with this occurrence.</p>;
  return (
    <>
      <p class="muted small">Innermost first: the first frame is where it was thrown.</p>
      {ours.length > 0 ? (
        <ol aria-label="In-app frames">
          {ours.map((f, i) => (
            <FrameItem key={i} frame={f} />
          ))}
        </ol>
      ) : (
        <p class="muted">No in-app frame: every frame is in a library or the runtime.</p>
      )}
      {others.length > 0 && (
        <details open={ours.length === 0}>
          <summary>
            {others.length} other frame{others.length === 1 ? "" : "s"} (libraries and runtime)
          </summary>
          <ol aria-label="Other frames">
            {others.map((f, i) => (
              <FrameItem key={i} frame={f} />
            ))}
          </ol>
        </details>
      )}
      {occurrence.framesOmitted > 0 && <p class="muted small">{occurrence.framesOmitted} more frame(s) were sent but not kept.</p>}
    </>
  );
}

const tagsText = (tags: Occurrence["tags"]) =>
  Object.entries(tags)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");

/** The latest occurrence in full, and a table of the other kept ones (the last 20 received and a sample of 5 older ones). */
export function Occurrences({ occurrences, type }: { occurrences: Occurrence[]; type: string }) {
  const [latest, ...rest] = occurrences;
  if (!latest) return null;
  const none = <span class="muted">none</span>;
  return (
    <>
      <section aria-labelledby="latest-occurrence">
        <h2 id="latest-occurrence">Latest occurrence</h2>
        <FactsTable
          caption={`About the latest occurrence of ${type}`}
          rows={[
            [
              "When",
              <>
                <When iso={latest.ts} /> <span class="muted small">({new Date(latest.ts).toLocaleString()})</span>
              </>,
            ],
            ["Message", latest.message],
            ["Unit", latest.unitId ?? none, "mono"],
            ["Release", latest.release ?? none, "mono"],
            ["Environment", latest.environment ?? none, "mono"],
            ["Tags", Object.keys(latest.tags).length > 0 ? tagsText(latest.tags) : none, "mono small"],
          ]}
        />
        <h3>Stack trace</h3>
        <Frames occurrence={latest} />
      </section>
      {rest.length > 0 && (
        <section aria-labelledby="kept-occurrences">
          <h2 id="kept-occurrences">Earlier kept occurrences</h2>
          <p class="muted small">The last 20 received and a sample of 5 older ones are kept; the newest first.</p>
          <DataTable
            caption={`Earlier kept occurrences of ${type}, newest first`}
            rows={rest}
            rowKey={(o) => String(o.id)}
            columns={[
              { header: "When", cell: (o) => <When iso={o.ts} /> },
              { header: "Message", cell: (o) => o.message },
              { header: "Where", class: "mono small", cell: (o) => {
                const top = o.frames.find((f) => f.inApp === true) ?? o.frames[0];
                return top ? `${top.function ?? "(anonymous)"} ${whereOf(top)}` : "";
              } },
              { header: "Unit", class: "mono", cell: (o) => o.unitId ?? "" },
              { header: "Release", class: "mono", cell: (o) => o.release ?? "" },
              { header: "Kept as", cell: (o) => o.kept },
            ]}
          />
        </section>
      )}
    </>
  );
}
