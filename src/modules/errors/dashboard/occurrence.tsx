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
        <table>
          <caption class="visually-hidden">About the latest occurrence of {type}</caption>
          <tbody>
            <tr>
              <th scope="row">When</th>
              <td>
                <When iso={latest.ts} /> <span class="muted small">({new Date(latest.ts).toLocaleString()})</span>
              </td>
            </tr>
            <tr>
              <th scope="row">Message</th>
              <td>{latest.message}</td>
            </tr>
            <tr>
              <th scope="row">Unit</th>
              <td class="mono">{latest.unitId ?? none}</td>
            </tr>
            <tr>
              <th scope="row">Release</th>
              <td class="mono">{latest.release ?? none}</td>
            </tr>
            <tr>
              <th scope="row">Environment</th>
              <td class="mono">{latest.environment ?? none}</td>
            </tr>
            <tr>
              <th scope="row">Tags</th>
              <td class="mono small">{Object.keys(latest.tags).length > 0 ? tagsText(latest.tags) : none}</td>
            </tr>
          </tbody>
        </table>
        <h3>Stack trace</h3>
        <Frames occurrence={latest} />
      </section>
      {rest.length > 0 && (
        <section aria-labelledby="kept-occurrences">
          <h2 id="kept-occurrences">Earlier kept occurrences</h2>
          <p class="muted small">The last 20 received and a sample of 5 older ones are kept; the newest first.</p>
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Message</th>
                <th scope="col">Where</th>
                <th scope="col">Unit</th>
                <th scope="col">Release</th>
                <th scope="col">Kept as</th>
              </tr>
            </thead>
            <tbody>
              {rest.map((o) => {
                const top = o.frames.find((f) => f.inApp === true) ?? o.frames[0];
                return (
                  <tr key={o.id}>
                    <td>
                      <When iso={o.ts} />
                    </td>
                    <td>{o.message}</td>
                    <td class="mono small">{top ? `${top.function ?? "(anonymous)"} ${whereOf(top)}` : ""}</td>
                    <td class="mono">{o.unitId ?? ""}</td>
                    <td class="mono">{o.release ?? ""}</td>
                    <td>{o.kept}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}
