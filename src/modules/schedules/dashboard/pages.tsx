import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { FilterSelect, ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Badge, ConfirmDialog, Dialog, Field, FormActions, Link, When } from "../../../web/dashboard/ui";
import type { scheduleRoutes } from "../routes";
// Constants only (types.ts imports nothing at run time).
import { STATES } from "../types";

const scheduleApi = apiOf<ReturnType<typeof scheduleRoutes>>();
type Schedule = NonNullable<Awaited<ReturnType<typeof scheduleApi.api.admin.schedules.get>>["data"]>[number];
type Step = Schedule["steps"][number];

const loadSchedules = (query: { q?: string; state?: string } = {}) => call(scheduleApi.api.admin.schedules.get({ query }));
const TONE = { pending: "accent", done: "ok", failed: "danger", cancelled: "muted" } as const;
const ENVS = ["prod", "staging", "dev"] as const;

/** "3 min", "2 h 5 min": how late a step ran. */
function lateText(ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 1) return `${Math.round(ms / 1000)} s`;
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ""}`;
}

/** One step in a line: its time, state, what it does, and when it ran (late, failed, not run). */
function StepLine({ step }: { step: Step }) {
  return (
    <li>
      <When iso={step.runAt} /> <Badge tone={TONE[step.state]}>{step.state}</Badge> {step.summary}
      {step.late && step.lateByMs !== null && <span class="muted small"> · ran {lateText(step.lateByMs)} late: no server was running at its time</span>}
      {step.error && <span class="muted small"> · {step.error}</span>}
    </li>
  );
}

/** A `datetime-local` value (the browser's time zone) as the API's ISO 8601 time; "" when empty or not a time. */
function isoOf(local: string): string {
  const ms = local ? new Date(local).getTime() : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : "";
}

/** A `datetime-local` value `minutes` from now, to start the form with. */
function localIn(minutes: number): string {
  const d = new Date(Date.now() + minutes * 60_000);
  d.setSeconds(0, 0);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

type What = "toggle" | "ramp";

/** A change's fields beside its kind: the route's schema types only `kind` (each kind's fields are checked by the server). */
const changeOf = (c: { kind: string } & Record<string, unknown>) => c as { kind: string };

/**
 * New schedule: a killswitch toggle at a time, or a gate percentage ramp (each step publishes one rule for
 * everyone at that percentage; the first at a time, the next every N hours). The server checks it as the
 * gate or killswitch would; its refusal is shown above the buttons.
 */
function NewScheduleDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (s: Schedule) => void }) {
  const [what, setWhat] = useState<What>("ramp");
  const [name, setName] = useState("");
  const [env, setEnv] = useState<(typeof ENVS)[number]>("prod");
  const [value, setValue] = useState("on");
  const [at, setAt] = useState(() => localIn(60));
  const [percents, setPercents] = useState("5, 25, 100");
  const [everyHours, setEveryHours] = useState("24");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const runAt = isoOf(at);
    if (!name.trim()) return setError(what === "ramp" ? "Name the gate to ramp." : "Name the killswitch.");
    if (!runAt) return setError("Choose when it runs.");
    let body: Parameters<typeof scheduleApi.api.admin.schedules.post>[0];
    if (what === "toggle") {
      body = { change: changeOf({ kind: "killswitch.set", name: name.trim(), env, value: value === "on" }), runAt };
    } else {
      const steps = percents.split(",").map((p) => Number(p.trim()));
      const hours = Number(everyHours);
      if (steps.length === 0 || steps.some((p) => !(p >= 0 && p <= 100))) return setError("Percentages: numbers from 0 to 100, separated by commas.");
      if (!(hours > 0)) return setError("Hours between steps: a number above 0.");
      const start = Date.parse(runAt);
      body = { steps: steps.map((p, i) => ({ change: changeOf({ kind: "gate.rules", name: name.trim(), env, rules: [{ conditions: [], passPercentage: p }] }), runAt: new Date(start + i * hours * 3_600_000).toISOString() })) };
    }
    setBusy(true);
    try {
      const created = await call(scheduleApi.api.admin.schedules.post(body));
      // The next one starts from a blank form.
      setError(null);
      setWhat("ramp");
      setName("");
      setAt(localIn(60));
      onCreated(created);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="New schedule" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="What">
          {(attrs) => (
            <select {...attrs} value={what} onChange={(e) => setWhat((e.target as HTMLSelectElement).value as What)}>
              <option value="ramp">Gate percentage ramp</option>
              <option value="toggle">Killswitch toggle</option>
            </select>
          )}
        </Field>
        <Field label={what === "ramp" ? "Gate" : "Killswitch"} hint={what === "ramp" ? "Each step replaces the gate's rules on the env with one rule: this percentage of everyone." : undefined}>
          {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
        </Field>
        <Field label="Env">
          {(attrs) => (
            <select {...attrs} value={env} onChange={(e) => setEnv((e.target as HTMLSelectElement).value as (typeof ENVS)[number])}>
              {ENVS.map((x) => (
                <option value={x}>{x}</option>
              ))}
            </select>
          )}
        </Field>
        {what === "toggle" ? (
          <Field label="Set it to">
            {(attrs) => (
              <select {...attrs} value={value} onChange={(e) => setValue((e.target as HTMLSelectElement).value)}>
                <option value="on">on (killed: SDKs read true)</option>
                <option value="off">off (live: SDKs read false)</option>
              </select>
            )}
          </Field>
        ) : (
          <>
            <Field label="Percentages" hint="In order, separated by commas, e.g. 5, 25, 100.">
              {(attrs) => <input {...attrs} value={percents} onInput={(e) => setPercents((e.target as HTMLInputElement).value)} autoComplete="off" />}
            </Field>
            <Field label="Hours between steps">{(attrs) => <input {...attrs} type="number" min={0} step="any" value={everyHours} onInput={(e) => setEveryHours((e.target as HTMLInputElement).value)} />}</Field>
          </>
        )}
        <Field label={what === "ramp" ? "First step at" : "Run at"} hint="Your browser's time zone.">
          {(attrs) => <input {...attrs} type="datetime-local" value={at} onInput={(e) => setAt((e.target as HTMLInputElement).value)} />}
        </Field>
        <FormActions error={error} onCancel={onClose} submitLabel="Schedule" disabled={busy} />
      </form>
    </Dialog>
  );
}

/** The project's scheduled changes, newest first: what, state, each step's time and state (late and failed notes), who; cancel; schedule a toggle or a ramp. */
function ScheduleList() {
  const session = useSession();
  const writable = can(session, "write");
  const [q, setQ] = useState("");
  const [state, setState] = useState("");
  const list = useLiveList(() => loadSchedules({ ...(q.trim() ? { q: q.trim() } : {}), ...(state ? { state } : {}) }), [session.project.id, q, state]);
  const rows = useRowDialogs<Schedule>(list.reload);
  const [creating, setCreating] = useState(false);
  const filtered = q.trim() !== "" || state !== "";
  return (
    <ResourceList
      title="Schedules"
      noun="schedule"
      intro={
        <>
          Changes that publish themselves at a set time: a <Link href="/killswitches">killswitch</Link> toggle, a <Link href="/gates">gate</Link>'s rules (a percentage ramp, step by step), a{" "}
          <Link href="/configs">config</Link> value or a segment. Each step runs once across your servers; one whose time passed while none was running runs on the next start and says it ran late.
        </>
      }
      search={{ value: q, onInput: setQ }}
      filtersClass="row filters"
      filters={<FilterSelect label="State" value={state} onChange={setState} options={STATES.map((s) => ({ value: s, text: s }))} />}
      items={list.data}
      error={list.error ?? rows.error}
      message={rows.message}
      create={writable && { label: "New schedule", onClick: () => setCreating(true) }}
      empty={filtered ? "No schedule matches these filters." : undefined}
      caption="Scheduled changes with their state, steps and author"
      rowKey={(s) => s.id}
      nameHeader="Change"
      name={(s) => (
        <>
          {s.steps.length === 1 ? s.steps[0]!.summary : `Ramp of ${s.steps.length} steps: ${s.steps[0]!.target.name}`}
          <div class="muted small mono">{s.id}</div>
        </>
      )}
      columns={[
        { header: "State", cell: (s) => <Badge tone={TONE[s.state]}>{s.state}</Badge> },
        {
          header: "Steps",
          cell: (s) => (
            <ol class="small schedule-steps">
              {s.steps.map((step) => (
                <StepLine step={step} />
              ))}
            </ol>
          ),
        },
        { header: "By", cell: (s) => s.createdBy },
        { header: "Created", cell: (s) => <When iso={s.createdAt} /> },
      ]}
      actions={
        writable &&
        ((s) =>
          s.state === "pending" && (
            <button type="button" class="danger secondary small" aria-label={`Cancel schedule ${s.id}`} onClick={() => rows.remove(s)}>
              Cancel
            </button>
          ))
      }
    >
      <NewScheduleDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={async (s) => {
          setCreating(false);
          await rows.done(`Scheduled ${s.id}.`);
        }}
      />
      <ConfirmDialog
        open={rows.deleting !== null}
        title="Cancel schedule"
        message={<p>The pending steps of {rows.deleting?.id} will not run. Steps that already ran stay as they are.</p>}
        confirmLabel="Cancel pending steps"
        danger
        onClose={rows.closeDelete}
        onConfirm={async () => {
          const s = rows.deleting!;
          try {
            await call(scheduleApi.api.admin.schedules({ id: s.id }).delete());
          } catch (err) {
            throw new Error(describeError(err));
          }
          await rows.done(`Cancelled the pending steps of ${s.id}.`);
        }}
      />
    </ResourceList>
  );
}

export const schedulesDashboard: DashboardModule = {
  pages: [
    {
      path: "/schedules",
      title: "Schedules",
      nav: { label: "Schedules", order: 53, group: "release" },
      empty: { about: "A schedule publishes a change at a set time: a killswitch toggle, or a gate raised to 5 %, 25 %, then 100 % over days.", command: "svc schedules create --file ramp.json" },
      view: ScheduleList,
    },
  ],
};
