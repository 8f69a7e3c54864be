import { useEffect, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { DataTable } from "../../../web/dashboard/data-table";
import { DetailFrame, notLoaded } from "../../../web/dashboard/detail-frame";
import { Badge, ConfirmDialog, Dialog, ErrorMessage, Field, FormActions, Link, Loading, When, errorsByPath, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { loadMetrics } from "../../metrics/dashboard/client";
import { loadUniverses } from "../../universes/dashboard/client";
import { AllocationDrawing } from "./allocation";
import { EXPERIMENT_FIELDS, type Experiment, experimentOf, loadExperiments, share } from "./client";
import { DeleteExperimentDialog, ExperimentDialog } from "./form";
import { ResultsView } from "./results";
import { StatusBadge } from "./status";

const json = (v: unknown) => JSON.stringify(v) ?? "null";

/** What the experiment ended with: shipped, rolled back by a person, or rolled back automatically by its guardrail (loudly, with why). */
function OutcomePanel({ e }: { e: Experiment }) {
  const o = e.outcome;
  if (!o) return null;
  if (o.auto) {
    return (
      <section class="outcome outcome-auto" aria-labelledby="outcome-title">
        <h2 id="outcome-title">Rolled back automatically by a guardrail</h2>
        <p>
          <Badge tone="danger" strong>
            auto-rollback
          </Badge>{" "}
          {e.stoppedAt && (
            <>
              <When iso={e.stoppedAt} />,{" "}
            </>
          )}
          by <span class="mono">{o.by}</span>: every unit gets the default again.
        </p>
        <p>
          <strong>Why:</strong> {o.reason ?? "no reason recorded"}
        </p>
      </section>
    );
  }
  return (
    <section class="outcome" aria-labelledby="outcome-title">
      <h2 id="outcome-title">{o.decision === "ship" ? `Shipped variant ${o.variant}` : "Rolled back"}</h2>
      <p>
        Stopped {e.stoppedAt && <When iso={e.stoppedAt} />} by <span class="mono">{o.by}</span>.{" "}
        {o.decision === "ship" ? `Make ${o.variant}'s value the default where it lives.` : "Every unit gets the default again."}
      </p>
      {o.reason && (
        <p>
          <strong>Reason:</strong> {o.reason}
        </p>
      )}
    </section>
  );
}

/** Stop a running experiment: ship a variant (which) or roll back, with a reason. The dialog is the confirmation. */
function StopDialog({ experiment, open, onClose, onStopped }: { experiment: Experiment; open: boolean; onClose: () => void; onStopped: (e: Experiment) => Promise<void> }) {
  const treatments = experiment.variants.slice(1);
  const [decision, setDecision] = useState<"ship" | "rollback">("ship");
  const [variant, setVariant] = useState(treatments[0]?.key ?? "");
  const [reason, setReason] = useState("");
  const [errors, setErrors] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!open) return;
    setDecision("ship");
    setVariant(experiment.variants[1]?.key ?? "");
    setReason("");
    setErrors(new Map());
    setError(null);
  }, [open, experiment]);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    try {
      const stopped = await call(experimentOf(experiment.id).stop.post({ decision, ...(decision === "ship" ? { variant } : {}), reason: reason.trim() || null }));
      await onStopped(stopped);
    } catch (err) {
      const split = errorsByPath(err, EXPERIMENT_FIELDS);
      setErrors(split.paths);
      setError(split.general);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title={`Stop ${experiment.name}?`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p>It leaves the snapshot: SDKs stop assigning its variants and every unit gets the default again. A stopped experiment cannot restart.</p>
        <fieldset>
          <legend>Decision</legend>
          <label class="check">
            <input type="radio" name="decision" value="ship" checked={decision === "ship"} onChange={() => setDecision("ship")} /> Ship a variant: it won
          </label>
          <label class="check">
            <input type="radio" name="decision" value="rollback" checked={decision === "rollback"} onChange={() => setDecision("rollback")} /> Roll back: keep what was there before
          </label>
          <ErrorMessage error={errors.get("decision")} />
        </fieldset>
        {decision === "ship" && (
          <Field label="Variant to ship" error={errors.get("variant")}>
            {(attrs) => (
              <select {...attrs} value={variant} onChange={(e) => setVariant(e.currentTarget.value)}>
                {experiment.variants.map((v, i) => (
                  <option key={v.key} value={v.key}>
                    {v.key}
                    {v.name !== v.key ? ` (${v.name})` : ""}
                    {i === 0 ? " (control)" : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        <Field label="Reason" error={errors.get("reason")} hint="Kept with the outcome and in the audit trail, e.g. +4.1 % purchases, p = 0.003.">
          {(attrs) => <textarea {...attrs} rows={2} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />}
        </Field>
        <FormActions error={error} onCancel={onClose} submitLabel={decision === "ship" ? `Stop and ship ${variant}` : "Stop and roll back"} disabled={busy || (decision === "ship" && !variant)} danger />
      </form>
    </Dialog>
  );
}

/**
 * One experiment: its design (variants, weights, values, overrides), its
 * allocation drawn over the universe with the holdout and the other running
 * experiments, Start / Stop by status, the outcome once stopped, and the
 * results (exposures, sample ratio check, per metric a forest plot and the
 * numbers).
 */
export function ExperimentDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [starting, setStarting] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const experiment = useLoad(() => call(experimentOf(name).get()), [session.project.id, name]);
  const context = useLoad(
    () => Promise.all([loadUniverses(), loadMetrics(), loadExperiments({ status: "running" })]).then(([universes, metrics, running]) => ({ universes, metrics, running })),
    [session.project.id, name],
  );
  const e = experiment.data;
  const results = useLoad(async () => (e && e.status !== "draft" ? await call(experimentOf(e.id).results.get()) : null), [session.project.id, e?.id, e?.status, e?.updatedAt]);
  useLiveReload(experiment.reload);
  // Other experiments start and stop meanwhile: the drawing follows.
  useLiveReload(context.reload, 10_000);
  useLiveReload(results.reload, 15_000);

  if (!e) return notLoaded(experiment);
  const universe = context.data?.universes.find((u) => u.id === e.universeId);
  const metricName = (id: string | null) => (id ? (context.data?.metrics.find((m) => m.id === id)?.name ?? id) : null);
  const running = (context.data?.running ?? []).filter((r) => r.universeId === e.universeId && r.id !== e.id);
  const weightSum = e.variants.reduce((s, v) => s + v.weight, 0);
  const reloadAll = () => Promise.all([experiment.reload(), context.reload(), results.reload()]).then(() => undefined);
  /** After a dialog's change: close it, reload, then say what it did. */
  const settle = async (close: (open: false) => void, said: string) => {
    close(false);
    await reloadAll();
    setMessage(said);
  };

  return (
    <DetailFrame
      back={{ href: "/experiments", label: "Experiments" }}
      title={
        <>
          {e.name} <StatusBadge e={e} />
        </>
      }
      description={e.description}
      meta={
        <>
          Universe <Link href="/universes">{e.universe}</Link> · env <span class="mono">{e.env}</span> · gate {e.gate ? <Link href={`/gates/${encodeURIComponent(e.gate)}`}>{e.gate}</Link> : "none (everyone in the allocation)"} ·{" "}
          {e.startedAt ? (
            <>
              started <When iso={e.startedAt} />
            </>
          ) : (
            "not started"
          )}
          {e.stoppedAt && (
            <>
              {" "}
              · stopped <When iso={e.stoppedAt} />
            </>
          )}
        </>
      }
      writable={writable}
      actions={
        <>
          {e.status === "draft" && (
            <button type="button" onClick={() => setStarting(true)}>
              Start experiment
            </button>
          )}
          {e.status === "running" && (
            <button type="button" class="danger" onClick={() => setStopping(true)}>
              Stop experiment
            </button>
          )}
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit experiment
          </button>
        </>
      }
      danger={e.status !== "running" && { noun: "experiment", open: () => setDeleting(true) }}
      error={context.error}
      message={message}
    >
      <OutcomePanel e={e} />

      <h2>Design</h2>
      <DataTable
        caption="Variants with their weights, values and overrides; the first is the control"
        rows={e.variants}
        rowKey={(v) => v.key}
        rowHeader={{
          header: "Variant",
          cell: (v) => (
            <>
              <span class="mono">{v.key}</span>
              {v.name !== v.key && <span class="muted"> {v.name}</span>}
              {v === e.variants[0] && <span class="muted small"> (control)</span>}
            </>
          ),
        }}
        columns={[
          {
            header: "Weight",
            cell: (v) => (
              <>
                {v.weight} <span class="muted small">({share(v.weight / weightSum)})</span>
              </>
            ),
          },
          { header: "Value", class: "mono small", cell: (v) => json(v.value) },
          {
            header: "Override",
            class: "small",
            cell: (v) =>
              v.override ? (
                <>
                  {v.override.kind} <span class="mono">{v.override.name}</span> → <span class="mono">{json(v.override.value)}</span>
                </>
              ) : (
                <span class="muted">none</span>
              ),
          },
        ]}
      />
      <p>
        Primary metric: {e.primaryMetric ? <Link href={`/metrics/${encodeURIComponent(metricName(e.primaryMetric)!)}`}>{metricName(e.primaryMetric)}</Link> : <span class="muted">none</span>}
        {" · "}Guardrails:{" "}
        {e.guardrailMetrics.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          e.guardrailMetrics.map((g, i) => (
            <span key={g.metric}>
              {i > 0 && ", "}
              <Link href={`/metrics/${encodeURIComponent(metricName(g.metric)!)}`}>{metricName(g.metric)}</Link> <span class="muted small">(worse when it {g.worseWhen === "increase" ? "increases" : "decreases"})</span>
            </span>
          ))
        )}
      </p>

      <h2>Allocation</h2>
      {context.data ? (
        <AllocationDrawing name={e.name} universe={e.universe} range={e.allocation} holdout={universe?.holdout_range ?? null} running={e.status === "stopped" ? [] : running.map((r) => ({ name: r.name, allocation: r.allocation }))} />
      ) : (
        !context.error && <Loading />
      )}

      <h2>Results</h2>
      {e.status === "draft" ? (
        <p class="muted">Results appear once the experiment starts and SDKs log exposures.</p>
      ) : (
        <>
          <ErrorMessage error={results.error} />
          {results.data ? <ResultsView experiment={e} results={results.data} /> : !results.error && <Loading />}
        </>
      )}

      <ConfirmDialog
        open={starting}
        title={`Start ${e.name}?`}
        message={
          <p>
            It is published in the <span class="mono">{e.env}</span> snapshot: SDKs assign the units of {e.universe} in its allocation ({share((e.allocation[1]! - e.allocation[0]!) / 10_000)} of them) and log exposures. Its universe, env, variants, allocation
            and gate are fixed from then on.
          </p>
        }
        confirmLabel="Start experiment"
        onConfirm={async () => {
          await call(experimentOf(e.id).start.post());
          await reloadAll();
          setMessage(`Started ${e.name}: it is in the ${e.env} snapshot`);
        }}
        onClose={() => setStarting(false)}
      />
      <StopDialog
        experiment={e}
        open={stopping}
        onClose={() => setStopping(false)}
        onStopped={(stopped) => settle(setStopping, stopped.outcome?.decision === "ship" ? `Stopped ${e.name}: shipped ${stopped.outcome.variant}` : `Stopped ${e.name}: rolled back`)}
      />
      <ExperimentDialog
        open={editing}
        editing={e}
        onClose={() => setEditing(false)}
        onSaved={async (saved) => {
          setEditing(false);
          setMessage(`Saved experiment ${saved.name}`);
          if (saved.name !== e.name) return navigate(`/experiments/${encodeURIComponent(saved.name)}`, { replace: true });
          await reloadAll();
        }}
      />
      <DeleteExperimentDialog experiment={deleting ? e : null} onClose={() => setDeleting(false)} onDeleted={() => navigate("/experiments")} />
    </DetailFrame>
  );
}
