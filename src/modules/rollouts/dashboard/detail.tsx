import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { DiffView, prettyJson } from "../../../web/dashboard/json-editor";
import { can, useSession } from "../../../web/dashboard/registry";
import { useFieldSubmit } from "../../../web/dashboard/create-form";
import { DataTable } from "../../../web/dashboard/data-table";
import { DetailFrame, notLoaded } from "../../../web/dashboard/detail-frame";
import { Badge, ConfirmDialog, Dialog, ErrorMessage, Field, FormActions, Link, Loading, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { DifferenceChart } from "./chart";
import {
  type Check,
  DECISION_TEXT,
  MAX_INGEST_LAG_MS,
  MIN_UNITS_PER_GROUP,
  type Rollout,
  UNFINISHED,
  directionText,
  intervalText,
  lagText,
  loadChecks,
  metricLabel,
  minutesText,
  num,
  pctText,
  positionText,
  relativeText,
  rolloutOf,
  signed,
  toleranceText,
} from "./client";
import { StageBar, StatusBadge } from "./stages";

const subjectHref = (r: Pick<Rollout, "kind" | "subject">) => `/${r.kind === "gate" ? "gates" : "configs"}/${encodeURIComponent(r.subject)}`;

/** Why it finished or paused: by whom, the reason, and for a regression the metric, its estimate and interval (loud when the monitor did it). */
function OutcomePanel({ r }: { r: Rollout }) {
  const o = r.outcome;
  if (!o) return null;
  const title =
    o.kind === "completed" ? "Completed: published for everyone" : o.kind === "rolled_back" ? (o.auto ? "Rolled back automatically on a regression" : "Rolled back") : o.auto ? "Paused automatically on a regression" : "Paused";
  const loud = o.auto && o.kind !== "completed";
  return (
    <section class={loud ? "outcome outcome-auto" : "outcome"} aria-labelledby="outcome-title">
      <h2 id="outcome-title">{title}</h2>
      <p>
        {loud && (
          <>
            <Badge tone="danger" strong>
              {o.kind === "paused" ? "auto-pause" : "auto-rollback"}
            </Badge>{" "}
          </>
        )}
        <When iso={o.at} /> by <span class="mono">{o.by}</span>.{" "}
        {o.kind === "rolled_back" ? "Every unit gets the old value again." : o.kind === "paused" ? "Units keep what the current stage gives them; nothing advances until it resumes." : ""}
      </p>
      <p>
        <strong>Reason:</strong> {o.reason ?? <span class="muted">none given</span>}
      </p>
      {o.metric !== undefined && (
        <dl class="outcome-regression">
          <dt>Regression metric</dt>
          <dd>{metricLabel(o.metric)}</dd>
          <dt>Estimate (with the change minus without, per unit)</dt>
          <dd>{signed(o.estimate)}</dd>
          <dt>Interval</dt>
          <dd>{intervalText(o.interval)}</dd>
        </dl>
      )}
    </section>
  );
}

/** A pause or a rollback: the dialog is the confirmation, with an optional reason kept in the outcome and the audit trail. */
function ReasonDialog(props: { open: boolean; title: string; children: ComponentChildren; submitLabel: string; danger?: boolean; onSubmit: (reason: string | undefined) => Promise<void>; onClose: () => void }) {
  const [reason, setReason] = useState("");
  const form = useFieldSubmit([]);
  useEffect(() => {
    if (!props.open) return;
    setReason("");
    form.clear();
  }, [props.open]);
  const submit = (e: Event) => {
    e.preventDefault();
    void form.run(() => props.onSubmit(reason.trim() || undefined));
  };
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        <div class="dialog-body">{props.children}</div>
        <Field label="Reason (optional)" hint="Kept with the outcome and in the audit trail.">
          {(attrs) => <textarea {...attrs} rows={2} maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />}
        </Field>
        <FormActions error={form.error} onCancel={props.onClose} submitLabel={props.submitLabel} disabled={form.busy} danger={props.danger} />
      </form>
    </Dialog>
  );
}

/** The newest check: when, what it decided, the ingest lag, and per metric both groups and the difference with its interval. */
function LastCheck({ check }: { check: Check }) {
  const stale = check.stale || check.ingestLagMs > MAX_INGEST_LAG_MS;
  return (
    <section aria-labelledby="last-check-title">
      <h2 id="last-check-title">Last check</h2>
      <p>
        <When iso={check.at} />, stage {check.stage + 1} ({pctText(check.percent)}): {DECISION_TEXT[check.decision]}.
      </p>
      <p>
        Ingest lag of the last check: <strong>{lagText(check.ingestLagMs)}</strong>{" "}
        {stale ? (
          <Badge tone="danger" strong>
            stale: the stage holds
          </Badge>
        ) : (
          <span class="muted small">(fresh: a stage advances only while the event data is less than {lagText(MAX_INGEST_LAG_MS)} behind)</span>
        )}
      </p>
      {check.problems.length > 0 && (
        <ul class="problems">
          {check.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {check.metrics.length === 0 ? (
        <p class="muted">No comparison at this stage: {check.percent >= 100 ? "everyone has the change (it was judged up to the stage before)" : "no group to compare"}.</p>
      ) : (
        <DataTable
          class="numbers"
          caption="Each watched metric at the last check: the units without and with the change, their means per unit, and the difference with its always-valid interval"
          captionShown
          rows={check.metrics}
          rowKey={(m) => m.metric}
          rowHeader={{
            header: "Metric",
            cell: (m) => (
              <>
                {metricLabel(m.metric)}
                <div class="muted small">
                  {directionText(m.direction)}, {toleranceText(m.tolerance)}
                </div>
              </>
            ),
          }}
          columns={[
            { header: "Units without / with", cell: (m) => `${m.old.n.toLocaleString("en")} / ${m.new.n.toLocaleString("en")}` },
            { header: "Mean without / with", cell: (m) => `${num(m.old.mean)} / ${num(m.new.mean)}` },
            {
              header: "Difference",
              cell: (m) => (
                <>
                  {signed(m.estimate)}
                  {relativeText(m.estimate, m.old.mean) && <span class="muted small"> ({relativeText(m.estimate, m.old.mean)})</span>}
                </>
              ),
            },
            { header: "Interval", cell: (m) => intervalText(m.interval) },
            { header: "Verdict", cell: (m) => <Verdict m={m} /> },
          ]}
        />
      )}
    </section>
  );
}

/** A watched metric's verdict at a check: a regression (loud), too little data yet, or none. */
function Verdict({ m }: { m: Check["metrics"][number] }) {
  if (m.regression) {
    return (
      <Badge tone="danger" strong>
        regression
      </Badge>
    );
  }
  if (m.estimate === null) return <span class="muted">{Math.min(m.old.n, m.new.n) < MIN_UNITS_PER_GROUP ? `too few units (${MIN_UNITS_PER_GROUP} a group)` : "no spread yet"}</span>;
  return <Badge tone="ok">no regression</Badge>;
}

type Acting = "pause" | "advance" | "rollback" | null;

/**
 * One rollout: the stage bar, status and outcome, the buttons that act on
 * it (Pause / Resume / Advance now / Roll back, Delete once finished), the
 * change against what was published, the last check with its ingest lag,
 * and each watched metric's difference with its interval over the checks.
 */
export function RolloutDetail({ id }: { id: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const [acting, setActing] = useState<Acting>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const rollout = useLoad(() => call(rolloutOf(id).get()), [session.project.id, id]);
  const r = rollout.data;
  const checks = useLoad(() => loadChecks(id), [session.project.id, id, r?.updatedAt]);
  useLiveReload(rollout.reload);
  useLiveReload(checks.reload, 15_000);

  if (!r) return notLoaded(rollout);
  // The checks follow: an action changes the rollout's updatedAt, which the checks' load depends on.
  const reloadAll = () => rollout.reload();
  const unfinished = UNFINISHED.includes(r.status);
  const last = r.stage >= r.stages.length - 1;
  const next = r.stages[r.stage + 1];
  const stage = r.stages[r.stage]!;
  const advancesAt = r.status === "running" && r.stageStartedAt ? new Date(new Date(r.stageStartedAt).getTime() + stage.minutes * 60_000).toISOString() : null;
  const what = r.kind === "gate" ? `gate ${r.subject}'s new rules` : `config ${r.subject}'s new value`;
  const act = async (run: () => Promise<Rollout>, done: (x: Rollout) => string) => {
    const updated = await run();
    await reloadAll();
    setMessage(done(updated));
  };

  return (
    <DetailFrame
      back={{ href: "/rollouts", label: "Rollouts" }}
      title={
        <>
          {r.subject} <span class="muted small">({r.kind}, {r.env})</span> <StatusBadge r={r} />
        </>
      }
      description={r.description}
      meta={
        <>
          Rolls out <Link href={subjectHref(r)}>{what}</Link> on <span class="mono">{r.env}</span> · created <When iso={r.createdAt} /> by <span class="mono">{r.createdBy}</span> · on a regression:{" "}
          {r.onRegression === "rollback" ? "roll back" : "pause"} · connectors {r.notify ? "told" : "not told"} · false alarm rate {pctText(r.falseAlarmRate * 100)}
          {r.status === "scheduled" && r.startAt && (
            <>
              {" "}
              · starts <When iso={r.startAt} />
            </>
          )}
        </>
      }
      writable={writable}
      actions={
        <>
          {r.status === "running" && (
            <button type="button" class="secondary" onClick={() => setActing("pause")}>
              Pause
            </button>
          )}
          {r.status === "paused" && (
            <button
              type="button"
              onClick={async () => {
                setActionError(null);
                try {
                  await act(() => call(rolloutOf(r.id).resume.post()), (x) => `Resumed ${x.subject}: stage ${x.stage + 1} (${pctText(x.percent)}) counts its minutes from now`);
                } catch (err) {
                  setActionError(describeError(err));
                }
              }}
            >
              Resume
            </button>
          )}
          {unfinished && (
            <button type="button" class="secondary" onClick={() => setActing("advance")}>
              Advance now
            </button>
          )}
          {unfinished && (
            <button type="button" class="danger" onClick={() => setActing("rollback")}>
              Roll back
            </button>
          )}
        </>
      }
      danger={
        (r.status === "completed" || r.status === "rolled_back" || r.status === "scheduled") && {
          noun: "rollout",
          title: `Delete the rollout of ${r.subject}?`,
          message: <p>The rollout and its checks go; the audit trail keeps what it did. The {r.kind} itself stays as it is.</p>,
          run: () => call(rolloutOf(r.id).delete()),
        }
      }
      error={actionError}
      message={message}
    >
      <OutcomePanel r={r} />

      <h2>Stages</h2>
      <StageBar r={r} />
      <p>
        {positionText(r)}
        {(r.status === "running" || r.status === "paused") && r.stageStartedAt && (
          <>
            {" "}
            · stage started <When iso={r.stageStartedAt} />
          </>
        )}
        {advancesAt && stage.minutes > 0 && (
          <>
            {" "}
            · {last ? "completes" : "advances"} no sooner than <When iso={advancesAt} /> ({minutesText(stage.minutes)} in the stage), if no regression is seen and the data is fresh
          </>
        )}
        {r.status === "paused" && <> · paused: nothing advances until it resumes</>}
      </p>

      <h2>Change</h2>
      {r.kind === "gate" ? (
        <DiffView before={prettyJson(r.previous.rules ?? [])} after={prettyJson(r.change.rules ?? [])} label={`Rules on ${r.env}: published (version ${r.previous.version}) against the rollout's`} />
      ) : (
        <DiffView before={prettyJson(r.previous.value)} after={prettyJson(r.change.value)} label={`Value on ${r.env}: published (version ${r.previous.version}) against the rollout's`} />
      )}

      <h2>Watched metrics</h2>
      <ul>
        {r.watch.map((w) => (
          <li key={w.metric}>
            {w.metricId ? <Link href={`/metrics/${encodeURIComponent(w.metric)}`}>{w.metric}</Link> : metricLabel(w.metric)}: {directionText(w.direction)}, {toleranceText(w.tolerance)}
          </li>
        ))}
      </ul>

      {r.lastCheck ? <LastCheck check={r.lastCheck} /> : <p class="muted">Not checked yet: the monitor compares both groups every minute while the rollout runs.</p>}

      <h2>Difference over time</h2>
      <ErrorMessage error={checks.error} />
      {!checks.data ? (
        !checks.error && <Loading />
      ) : checks.data.length === 0 ? (
        <p class="muted">No checks yet.</p>
      ) : (
        r.watch.map((w) => (
          <section key={w.metric} class="panel metric-result" aria-labelledby={`watch-${w.metric}`}>
            <h3 id={`watch-${w.metric}`}>{metricLabel(w.metric)}</h3>
            <DifferenceChart watch={w} checks={checks.data!} />
          </section>
        ))
      )}

      <ReasonDialog
        open={acting === "pause"}
        title={`Pause ${r.subject}?`}
        submitLabel="Pause rollout"
        onClose={() => setActing(null)}
        onSubmit={async (reason) => {
          await act(() => call(rolloutOf(r.id).pause.post(reason ? { reason } : {})), (x) => `Paused ${x.subject} at stage ${x.stage + 1} (${pctText(x.percent)})`);
          setActing(null);
        }}
      >
        <p>
          Units keep what stage {r.stage + 1} gives them ({pctText(stage.percent)} get the change); nothing advances until it resumes. The monitor keeps no watch while it is paused.
        </p>
      </ReasonDialog>
      <ReasonDialog
        open={acting === "rollback"}
        title={`Roll back ${r.subject}?`}
        submitLabel="Roll back"
        danger
        onClose={() => setActing(null)}
        onSubmit={async (reason) => {
          await act(() => call(rolloutOf(r.id).rollback.post(reason ? { reason } : {})), (x) => `Rolled back ${x.subject}: every unit gets the old value again`);
          setActing(null);
        }}
      >
        <p>
          Every unit on <span class="mono">{r.env}</span> gets the old {r.kind === "gate" ? "rules" : "value"} again at once (a new snapshot revision), and the rollout ends as rolled back. It cannot restart: start a new one.
        </p>
      </ReasonDialog>
      <ConfirmDialog
        open={acting === "advance"}
        title={`Advance ${r.subject} now?`}
        message={
          <p>
            {r.status === "scheduled"
              ? `It starts now at stage 1: ${pctText(r.stages[0]!.percent)} of units get the change.`
              : last || !next
                ? `It completes: the change is published for everyone on ${r.env} (a new ${r.kind === "gate" ? "rules" : "value"} version), without waiting for the monitor.`
                : `Stage ${r.stage + 2}: ${pctText(next.percent)} of units get the change (now ${pctText(stage.percent)}), without waiting for the stage's time or the monitor.`}
          </p>
        }
        confirmLabel="Advance now"
        onConfirm={() =>
          act(
            () => call(rolloutOf(r.id).advance.post()),
            (x) => (x.status === "completed" ? `Completed ${x.subject}: published for everyone` : `Advanced ${x.subject} to stage ${x.stage + 1} (${pctText(x.percent)})`),
          )
        }
        onClose={() => setActing(null)}
      />
    </DetailFrame>
  );
}
