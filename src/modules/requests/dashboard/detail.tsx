import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { DetailFrame, notLoaded, useActions } from "../../../web/dashboard/detail-frame";
import { TextAreaField } from "../../../web/dashboard/form-kit";
import { DiffView, prettyJson } from "../../../web/dashboard/json-editor";
import { can, useSession } from "../../../web/dashboard/registry";
import { Badge, Dialog, FormActions, When, useLoad, useLiveReload } from "../../../web/dashboard/ui";
import { type RequestChange, TONE, loadRequest, requestApi } from "./client";

/** One side of a change: its caption and the value as pretty JSON (scrollable, so reachable by keyboard). */
const Pane = ({ caption, text }: { caption: string; text: string }) => (
  <figure class="diff-view">
    <figcaption>{caption}</figcaption>
    <pre class="mono small" tabIndex={0}>
      {text}
    </pre>
  </figure>
);

/**
 * One change of a request: "Published now" and "Proposed" side by side (stacked on a phone, the kit's `.diff`), then
 * their line diff; a kind that shows no diff, or a request no longer pending, shows the proposal alone and says why.
 */
function ChangeDiff({ c }: { c: RequestChange }) {
  const headingId = `change-${c.position}`;
  const proposed = prettyJson(c.proposed ?? c.change);
  const hasCurrent = c.currentNote === undefined;
  return (
    <section aria-labelledby={headingId} class="request-change">
      <h2 id={headingId}>
        Change {c.position}: {c.summary}
      </h2>
      <p class="muted small">
        {c.kind} · {c.target.type} {c.target.name}
        {c.env ? ` on ${c.env}` : " (every env)"} · opened against {c.fingerprint}
      </p>
      {hasCurrent ? (
        <>
          <div class="diff">
            <Pane caption="Published now" text={prettyJson(c.current)} />
            <Pane caption="Proposed" text={proposed} />
          </div>
          <DiffView before={prettyJson(c.current)} after={proposed} label={`What change ${c.position} changes, line by line`} />
        </>
      ) : (
        <>
          <p class="muted">Published now: {c.currentNote}.</p>
          <Pane caption="Proposed" text={proposed} />
        </>
      )}
    </section>
  );
}

/**
 * A change request: its state, reason, author, the approvals so far, the stale or rejection note, each change as a
 * diff against what is published now, and the decisions the person's role and the state allow: approve (not their
 * own), reject with a note, withdraw (their own), rebase (their own, stale), apply (approved). The server decides; a refusal shows in its words.
 */
export function RequestDetail({ id }: { id: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const load = useLoad(() => loadRequest(id), [id, session.project.id]);
  useLiveReload(load.reload, 5000);
  const actions = useActions<"approve" | "reject" | "withdraw" | "rebase" | "apply">(load.reload);
  const [rejecting, setRejecting] = useState(false);
  const [note, setNote] = useState("");
  const pending = notLoaded(load);
  if (pending) return pending;
  const r = load.data!;
  const one = requestApi.api.admin.requests({ id: r.id });
  const mine = r.author === session.email;
  const decide = (verb: "approve" | "withdraw" | "rebase" | "apply", said: string) => actions.run(verb, () => call(one[verb].post()), said).catch(() => undefined);
  const open = r.state === "open";
  const undecided = open || r.state === "approved";
  return (
    <DetailFrame
      back={{ href: "/requests", label: "Change requests" }}
      title={
        <>
          {r.title} <Badge tone={TONE[r.state]}>{r.state}</Badge>
        </>
      }
      description={r.reason ?? undefined}
      meta={
        <>
          <span class="mono">{r.id}</span> · opened by {r.author} <When iso={r.createdAt} /> · {r.approvals.length} of {r.approvalsRequired} approval{r.approvalsRequired === 1 ? "" : "s"}
          {r.decidedBy && ` · ${r.state} by ${r.decidedBy}`}
        </>
      }
      writable={writable}
      actions={
        <>
          {open && !mine && (
            <button type="button" disabled={actions.busy !== null} onClick={() => decide("approve", "Approved.")}>
              Approve
            </button>
          )}
          {r.state === "approved" && (
            <button type="button" disabled={actions.busy !== null} onClick={() => decide("apply", "Applied: the changes are published.")}>
              Apply
            </button>
          )}
          {r.state === "stale" && mine && (
            <button type="button" disabled={actions.busy !== null} onClick={() => decide("rebase", "Rebased onto what is published now: open again, to be approved anew.")}>
              Rebase
            </button>
          )}
          {undecided && mine && (
            <button type="button" class="secondary" disabled={actions.busy !== null} onClick={() => decide("withdraw", "Withdrawn.")}>
              Withdraw
            </button>
          )}
          {undecided && (
            <button
              type="button"
              class="danger secondary"
              disabled={actions.busy !== null}
              onClick={() => {
                setNote("");
                setRejecting(true);
              }}
            >
              Reject…
            </button>
          )}
        </>
      }
      error={actions.error}
      message={actions.message}
    >
      {r.state === "stale" && (
        <div class="warning" role="note">
          <strong>Stale: what it changes moved since it was opened.</strong> {r.note} Open it again against what is published now.
        </div>
      )}
      {r.state === "rejected" && r.note && (
        <p>
          <strong>Rejected</strong>
          {r.decidedBy ? ` by ${r.decidedBy}` : ""}: {r.note}
        </p>
      )}
      <section aria-labelledby="request-approvals">
        <h2 id="request-approvals">
          Approvals ({r.approvals.length} of {r.approvalsRequired})
        </h2>
        {r.approvals.length === 0 ? (
          <p class="muted">None yet{open ? `: a person other than ${r.author} with the role to make the change approves it.` : "."}</p>
        ) : (
          <ul>
            {r.approvals.map((a) => (
              <li key={a.by}>
                {a.by} <When iso={a.at} />
              </li>
            ))}
          </ul>
        )}
      </section>
      {r.changes.map((c) => (
        <ChangeDiff key={c.position} c={c} />
      ))}
      {r.state === "applied" && <p class="muted small">What the changes replaced is in the audit trail (request.apply).</p>}
      <Dialog open={rejecting} title={`Reject ${r.title}?`} onClose={() => setRejecting(false)}>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              await actions.run("reject", () => call(one.reject.post(note.trim() ? { note: note.trim() } : {})), "Rejected.");
              setRejecting(false);
            } catch {
              // Shown by the page's error line (useActions).
              setRejecting(false);
            }
          }}
        >
          <TextAreaField label="Note" value={note} onInput={setNote} hint="Why, for the author (optional)." rows={3} />
          <FormActions error={null} onCancel={() => setRejecting(false)} submitLabel="Reject request" danger disabled={actions.busy !== null} />
        </form>
      </Dialog>
    </DetailFrame>
  );
}
