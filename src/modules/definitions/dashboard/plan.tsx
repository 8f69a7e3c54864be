import { useId, useRef, useState } from "preact/hooks";
import { ApiFailure, apiOf, call, describeError } from "../../../web/dashboard/api";
import { CheckField } from "../../../web/dashboard/form-kit";
import { ConfirmDialog, ErrorMessage, Field, Link, Status } from "../../../web/dashboard/ui";
import type { definitionsRoutes } from "../routes";
import { requestHref } from "../../requests/dashboard/client";

export const definitionsApi = apiOf<ReturnType<typeof definitionsRoutes>>();

type Plan = { changes: { section: string; name: string; action: "create" | "update" | "delete"; changes: { field: string; before: unknown; after: unknown }[] }[]; summary: { create: number; update: number; delete: number } };

const show = (v: unknown) => (v === null || v === undefined ? "—" : JSON.stringify(v));
const countsText = (s: Plan["summary"]) => `${s.create} created, ${s.update} changed, ${s.delete} deleted`;
const ACTION = { create: "created", update: "changed", delete: "deleted" } as const;

/**
 * The document as the server takes it: JSON text is parsed here (its mistakes said on the field), anything
 * else goes as it is and the server reads it as YAML (no YAML parser in the browser: see ../body.ts).
 */
function bodyOf(text: string): unknown {
  if (!/^\s*[{[]/.test(text)) return text;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiFailure(400, "BAD_REQUEST", "The document is not valid JSON", (err as Error).message);
  }
}

/** What a plan changes: per resource, created / changed (each field, before → after) / deleted. */
function PlanView({ plan }: { plan: Plan }) {
  if (plan.changes.length === 0) return <p>Nothing to change: the project already matches the document.</p>;
  return (
    <>
      <p>
        <strong>Plan:</strong> {countsText(plan.summary)}
      </p>
      <ul class="plan small" aria-label="Planned changes">
        {plan.changes.map((c) => (
          <li key={`${c.section}/${c.name}`}>
            <span class="mono">
              {c.section}/{c.name}
            </span>{" "}
            {ACTION[c.action]}
            {c.action !== "delete" && c.changes.length > 0 && (
              <ul>
                {c.changes.map((f) => (
                  <li key={f.field}>
                    <span class="mono">{f.field}</span>: <span class="mono wrap-anywhere">{show(f.before)}</span> → <span class="mono wrap-anywhere">{show(f.after)}</span>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * Paste a document or choose a file, Plan (a dry run: every change checked, nothing kept), then Apply after a
 * confirmation. On an env that requires approval the apply opens one change request instead (202).
 */
export function PlanApply({ text, onText, writable }: { text: string; onText: (text: string) => void; writable: boolean }) {
  const id = useId();
  const docRef = useRef<HTMLTextAreaElement>(null);
  const focusDoc = () => setTimeout(() => docRef.current?.focus(), 0);
  const [prune, setPrune] = useState(false);
  const [plan, setPlan] = useState<(Plan & { approvalRequired?: boolean }) | null>(null);
  const [docError, setDocError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [opened, setOpened] = useState<{ id: string; approvals: number } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const edit = (next: string) => {
    onText(next);
    setPlan(null);
    setDocError(null);
  };
  const chooseFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (file) edit(await file.text());
  };
  const send = (dryRun: boolean) => call(definitionsApi.api.admin.apply.post(bodyOf(text) as never, { query: { dryRun: dryRun ? "true" : undefined, prune: prune ? "true" : undefined } }));
  const planNow = async () => {
    setError(null);
    setDocError(null);
    setMessage(null);
    setOpened(null);
    if (text.trim() === "") {
      setDocError("Paste a document or choose a file first.");
      focusDoc();
      return;
    }
    setBusy(true);
    try {
      const res = await send(true);
      setPlan("plan" in res ? res.plan : res);
    } catch (err) {
      // A document's refusal names its field (gates[0].envs…): it belongs on the document box.
      setDocError(describeError(err));
      focusDoc();
    } finally {
      setBusy(false);
    }
  };
  const applyNow = async () => {
    const res = await send(false);
    setPlan(null);
    if ("request" in res) {
      setOpened({ id: res.request.id, approvals: res.request.approvalsRequired });
      setMessage(`Opened change request ${res.request.id} (needs ${res.request.approvalsRequired} approval${res.request.approvalsRequired === 1 ? "" : "s"}).`);
    } else setMessage(res.applied ? `Applied: ${countsText(res.summary)}.` : "Nothing to change: the project already matches the document.");
  };
  return (
    <section class="panel" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Plan and apply</h2>
      <p class="muted small">
        A document as Export (or <code>svc export</code>) writes it, YAML or JSON. Plan shows what applying it changes, every change checked; a section the document leaves out is not touched.
      </p>
      <Field label="Document (YAML or JSON)" error={docError}>
        {(attrs) => <textarea {...attrs} ref={docRef} class="editor mono" rows={12} spellcheck={false} value={text} onInput={(e) => edit(e.currentTarget.value)} />}
      </Field>
      <Field label="Or choose a file">{(attrs) => <input {...attrs} type="file" accept=".yaml,.yml,.json,application/json,application/yaml,text/yaml" onChange={(e) => void chooseFile(e.currentTarget)} />}</Field>
      <CheckField checked={prune} onChange={(v) => (setPrune(v), setPlan(null))}>
        Prune: also delete what a section of the document lists no longer
      </CheckField>
      <div class="actions start">
        <button type="button" class="secondary" disabled={busy} onClick={planNow}>
          {busy ? "Planning…" : "Plan"}
        </button>
        {writable && plan && plan.changes.length > 0 && (
          <button type="button" onClick={() => setConfirming(true)}>
            Apply
          </button>
        )}
      </div>
      {plan && (
        <div aria-live="polite">
          <PlanView plan={plan} />
          {plan.approvalRequired && <p class="small">An env it publishes on requires approval: Apply opens a change request instead of publishing.</p>}
        </div>
      )}
      <ErrorMessage error={error} />
      <Status message={message} />
      {opened && (
        <p>
          <Link href={requestHref(opened)}>See change request {opened.id}</Link>
        </p>
      )}
      <ConfirmDialog
        open={confirming}
        title="Apply these changes?"
        message={plan ? `${countsText(plan.summary)}${prune ? ", pruning" : ""}. Each change is audited; the first refusal changes nothing.` : ""}
        confirmLabel="Apply"
        danger={(plan?.summary.delete ?? 0) > 0}
        onConfirm={applyNow}
        onClose={() => setConfirming(false)}
      />
    </section>
  );
}
