import { useId, useMemo, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { Table } from "../../../web/dashboard/data-table";
import { JsonEditor } from "../../../web/dashboard/json-editor";
import { ConfirmDialog, ErrorMessage, Status, focusLater } from "../../../web/dashboard/ui";
import { type DraftCondition, GATE_OPS, type GateOp, OP_LABELS, emptyCondition, valueHint, valueKind } from "../../gates/dashboard/client";
import type { ConfigRule } from "../../../sdk/configs";
import { type Env, configApi } from "./client";
import { RulesPreview } from "./rules-preview";
import { type EditRule, type SplitRow, canonical, emptyEditRule, newSplitRow, sharesText, switchMode, toEdit, toRules, weightOf, weightSum } from "./rules-model";
import { useValueCheck } from "./value-check";

type Config = NonNullable<Awaited<ReturnType<ReturnType<typeof configApi.api.admin.configs>["get"]>>["data"]>;

/**
 * A config's rules on one env (issue 29): the ordered list the draft holds (else the published one),
 * edited here, saved with the draft's default value, published as one version; and a live preview of
 * what a typed context is served.
 */
export function ConfigRules({ config, env, writable, onChanged }: { config: Config; env: Env; writable: boolean; onChanged: () => Promise<void> }) {
  const base = useId();
  const draft = config.drafts[env];
  const source = (draft?.rules ?? config.envs[env].rules) as ConfigRule[];
  // A new stored state (another env, a save, a publish) starts the editor afresh from it; the keys stay put while it does not change.
  const sourceKey = `${env}:${draft?.updatedAt ?? ""}:${config.envs[env].version}:${canonical(source)}`;
  const fresh = useMemo(() => toEdit(source), [sourceKey]);
  const [state, setState] = useState<{ key: string; rules: EditRule[] } | null>(null);
  const edit = state && state.key === sourceKey ? state.rules : fresh;
  const [said, setSaid] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [publishing, setPublishing] = useState(false);
  const api = configApi.api.admin.configs({ id: config.name });
  const { rules, problems } = toRules(edit);
  const unsaved = problems.length > 0 || canonical(rules) !== canonical(source);
  const readOnly = !writable;

  const setEdit = (next: EditRule[]) => setState({ key: sourceKey, rules: next });
  const change = (next: EditRule[], message?: string) => {
    setEdit(next);
    if (message) setSaid(message);
  };
  const setRule = (i: number, patch: Partial<EditRule>) => change(edit.map((r, k) => (k === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...edit];
    const [rule] = next.splice(i, 1);
    next.splice(i + by, 0, rule!);
    change(next, `Moved rule ${i + 1} ${by < 0 ? "up" : "down"}: it is now rule ${i + by + 1}`);
    const to = i + by;
    focusLater(`${base}-r${rule!.key}-${(by < 0 && to > 0) || to === next.length - 1 ? "up" : "down"}`);
  };
  const addRule = () => {
    const rule = emptyEditRule();
    change([...edit, rule], `Added rule ${edit.length + 1}`);
    focusLater(`${base}-r${rule.key}-name`);
  };
  const removeRule = (i: number) => {
    change(
      edit.filter((_, k) => k !== i),
      `Removed rule ${i + 1}`,
    );
    focusLater(`${base}-add`);
  };

  const save = async () => {
    try {
      // The draft's default value goes with the rules: the draft's own, else the published one.
      const value = draft ? draft.value : config.envs[env].value;
      await call(api.drafts.put({ env, value, rules }));
      setError(null);
      await onChanged();
      setSaid(`Saved ${rules.length} rule${rules.length === 1 ? "" : "s"} in the ${env} draft; publish it to make them live`);
    } catch (err) {
      setError(describeError(err));
    }
  };
  const publish = async () => {
    const done = await call(api.publish.post({ env }));
    await onChanged();
    setSaid(`Published the ${env} draft of ${config.name} with its rules: version ${done.version}`);
  };

  return (
    <section aria-labelledby={`${base}-heading`}>
      <h2 id={`${base}-heading`}>Rules on {env}</h2>
      <p class="muted small">
        In order: the first rule whose conditions all hold serves its value, or a split of values by a stable hash of the unit (growing a weight only moves units into that value). No rule holding serves the
        default value above.{" "}
        {draft?.rules ? "These are the draft's rules." : draft ? "The draft keeps the published rules." : "These are the published rules."}
      </p>
      {edit.length === 0 && <p class="muted">No rules on {env}: everyone gets the default value.</p>}
      <ol class="switch-list">
        {edit.map((rule, i) => (
          <li key={rule.key}>
            <RuleFields
              config={config.name}
              rule={rule}
              n={i + 1}
              last={i === edit.length - 1}
              ids={base}
              readOnly={readOnly}
              onChange={(patch) => setRule(i, patch)}
              onMove={(by) => move(i, by)}
              onRemove={() => removeRule(i)}
            />
          </li>
        ))}
      </ol>
      <Status message={said} />
      <ErrorMessage error={error} />
      {writable && (
        <>
          {unsaved && problems.length > 0 && (
            <div class="warning" id={`${base}-problems`}>
              <strong>Not ready to save:</strong>
              <ul>
                {problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            </div>
          )}
          <div class="actions start">
            <button type="button" class="secondary" id={`${base}-add`} onClick={addRule}>
              Add rule
            </button>
            <button type="button" disabled={!unsaved || problems.length > 0} aria-describedby={problems.length ? `${base}-problems` : undefined} onClick={save}>
              Save rules draft
            </button>
            <button type="button" disabled={!draft || unsaved} onClick={() => setPublishing(true)}>
              Publish rules to {env}
            </button>
            {unsaved && (
              <button type="button" class="secondary" onClick={() => change(toEdit(source), "Undid the rule changes")}>
                Undo rule changes
              </button>
            )}
          </div>
          {!draft && !unsaved && <p class="muted small">Change the rules and save them as a draft; publishing makes the draft live.</p>}
        </>
      )}
      <RulesPreview name={config.name} env={env} draft={Boolean(draft)} revision={`${draft?.updatedAt ?? ""}:${config.envs[env].version}`} unsaved={unsaved} />
      <ConfirmDialog
        open={publishing}
        title={`Publish the rules of ${config.name} on ${env}?`}
        message={
          <>
            <p>The {env} draft goes live as one version: its default value and these {rules.length} rules. SDKs on {env} get them within seconds.</p>
            <ol>
              {rules.map((r, i) => (
                <li key={i}>
                  {r.name ?? `rule-${i + 1}`}: {r.conditions.length ? r.conditions.map((c) => `${c.attr} ${c.op}${c.value === undefined ? "" : ` ${JSON.stringify(c.value)}`}`).join(" and ") : "everyone"} →{" "}
                  {r.split ? r.split.map((e) => `${JSON.stringify(e.value)} ${e.weight}%`).join(" / ") : JSON.stringify(r.value)}
                </li>
              ))}
            </ol>
          </>
        }
        confirmLabel="Publish now"
        danger={env === "prod"}
        onConfirm={publish}
        onClose={() => setPublishing(false)}
      />
    </section>
  );
}

type RuleProps = {
  config: string;
  rule: EditRule;
  n: number;
  last: boolean;
  ids: string;
  readOnly: boolean;
  onChange: (patch: Partial<EditRule>) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
};

/** One rule: name, conditions, and what it serves (one value, or a split with its weights bar). */
function RuleFields({ config, rule, n, last, ids, readOnly, onChange, onMove, onRemove }: RuleProps) {
  const id = `${ids}-r${rule.key}`;
  const setCondition = (j: number, patch: Partial<DraftCondition>) => onChange({ conditions: rule.conditions.map((c, k) => (k === j ? { ...c, ...patch } : c)) });
  const addCondition = () => {
    const c = emptyCondition();
    onChange({ conditions: [...rule.conditions, c] });
    focusLater(`${id}-c${c.key}-attr`);
  };
  return (
    <fieldset>
      <legend>
        Rule {n}
        {rule.name.trim() ? `: ${rule.name.trim()}` : ""}
      </legend>
      <div class="field">
        <label for={`${id}-name`}>
          Name<span class="visually-hidden"> of rule {n}</span>
        </label>
        <input id={`${id}-name`} value={rule.name} readOnly={readOnly} autoComplete="off" placeholder={`rule-${n}`} onInput={(e) => onChange({ name: e.currentTarget.value })} />
      </div>
      {rule.conditions.length === 0 ? (
        <p class="muted small">No conditions: holds for everyone.</p>
      ) : (
        <Table caption={`Conditions of rule ${n}: all must hold`} headers={["Attribute", "Operator", "Value"]} actions={!readOnly}>
          {rule.conditions.map((c, j) => (
            <ConditionRow key={c.key} c={c} id={`${id}-c${c.key}`} where={`of rule ${n}, condition ${j + 1}`} removeLabel={`Remove condition ${j + 1} of rule ${n}`} readOnly={readOnly} onChange={(patch) => setCondition(j, patch)} onRemove={() => onChange({ conditions: rule.conditions.filter((_, k) => k !== j) })} />
          ))}
        </Table>
      )}
      {!readOnly && (
        <button type="button" class="secondary small" aria-label={`Add condition to rule ${n}`} onClick={addCondition}>
          Add condition
        </button>
      )}
      <fieldset>
        <legend>
          Serves<span class="visually-hidden"> (rule {n})</span>
        </legend>
        <div class="row">
          {(["value", "split"] as const).map((mode) => (
            <label key={mode}>
              <input type="radio" name={`${id}-mode`} checked={rule.mode === mode} disabled={readOnly} onChange={() => onChange(switchMode(rule, mode))} /> {mode === "value" ? "One value" : "Split"}
              <span class="visually-hidden"> for rule {n}</span>
            </label>
          ))}
        </div>
        {rule.mode === "value" ? <RuleValue config={config} text={rule.text} saved={rule.saved} n={n} readOnly={readOnly} onChange={(text) => onChange({ text })} /> : <SplitEditor config={config} rule={rule} n={n} id={id} readOnly={readOnly} onChange={onChange} />}
      </fieldset>
      {!readOnly && (
        <div class="actions start">
          <button type="button" class="secondary small" id={`${id}-up`} aria-label={`Move rule ${n} up`} disabled={n === 1} onClick={() => onMove(-1)}>
            Up
          </button>
          <button type="button" class="secondary small" id={`${id}-down`} aria-label={`Move rule ${n} down`} disabled={last} onClick={() => onMove(1)}>
            Down
          </button>
          <button type="button" class="danger secondary small" aria-label={`Remove rule ${n}`} onClick={onRemove}>
            Remove
          </button>
        </div>
      )}
    </fieldset>
  );
}

function ConditionRow({ c, id, where, removeLabel, readOnly, onChange, onRemove }: { c: DraftCondition; id: string; where: string; removeLabel: string; readOnly: boolean; onChange: (patch: Partial<DraftCondition>) => void; onRemove: () => void }) {
  const kind = valueKind(c.op);
  const hint = valueHint(c.op) ?? (c.op === "in_segment" || c.op === "not_in_segment" ? "A segment's name" : undefined);
  return (
    <tr>
      <td>
        <input id={`${id}-attr`} aria-label={`Attribute ${where}`} value={c.attr} readOnly={readOnly} autoComplete="off" onInput={(e) => onChange({ attr: e.currentTarget.value })} />
      </td>
      <td>
        <select aria-label={`Operator ${where}`} value={c.op} disabled={readOnly} onChange={(e) => onChange({ op: e.currentTarget.value as GateOp })}>
          {GATE_OPS.map((op) => (
            <option key={op} value={op}>
              {OP_LABELS[op]}
            </option>
          ))}
        </select>
      </td>
      <td>
        {kind === "none" ? (
          <span class="muted small">no value</span>
        ) : (
          <>
            {kind === "number" ? (
              <input aria-label={`Value ${where}`} type="number" step="any" value={c.text} readOnly={readOnly} onInput={(e) => onChange({ text: e.currentTarget.value })} />
            ) : (
              <input aria-label={`Value ${where}`} value={c.text} readOnly={readOnly} autoComplete="off" spellcheck={false} aria-describedby={hint ? `${id}-hint` : undefined} onInput={(e) => onChange({ text: e.currentTarget.value })} />
            )}
            {hint && (
              <p class="hint" id={`${id}-hint`}>
                {hint}
              </p>
            )}
          </>
        )}
      </td>
      {!readOnly && (
        <td>
          <button type="button" class="secondary small" aria-label={removeLabel} onClick={onRemove}>
            Remove
          </button>
        </td>
      )}
    </tr>
  );
}

/** What a check of a value says, beside its field. */
function CheckNote({ config, text, saved, id }: { config: string; text: string; saved: string | undefined; id: string }) {
  const unchanged = text === saved;
  const check = useValueCheck(config, text, !unchanged);
  if (unchanged) return <p class="visually-hidden" id={id} />;
  if (check.state === "invalid") {
    return (
      <p class="error small" id={id}>
        {check.problems.join("; ")}
      </p>
    );
  }
  return (
    <p class="muted small" id={id}>
      {check.state === "valid" ? "Fits the schema." : "Checking…"}
    </p>
  );
}

function RuleValue({ config, text, saved, n, readOnly, onChange }: { config: string; text: string; saved: string | undefined; n: number; readOnly: boolean; onChange: (text: string) => void }) {
  const id = useId();
  return (
    <>
      <JsonEditor value={text} label={`Value served by rule ${n} (JSON)`} onChange={onChange} describedBy={id} readOnly={readOnly} />
      <CheckNote config={config} text={text} saved={saved} id={id} />
    </>
  );
}

const SEGMENT_COLOURS = ["var(--accent)", "#c2410c", "#15803d", "#7c3aed", "#0e7490", "#b91c1c", "#a16207", "#be185d"];

function SplitEditor({ config, rule, n, id, readOnly, onChange }: { config: string; rule: EditRule; n: number; id: string; readOnly: boolean; onChange: (patch: Partial<EditRule>) => void }) {
  const sum = weightSum(rule);
  const setRow = (j: number, patch: Partial<SplitRow>) => onChange({ split: rule.split.map((r, k) => (k === j ? { ...r, ...patch } : r)) });
  const addRow = () => {
    const row = newSplitRow("", String(Math.max(0, 100 - sum)));
    onChange({ split: [...rule.split, row] });
    focusLater(`${id}-s${row.key}`);
  };
  return (
    <>
      <Table caption={`Values of the split of rule ${n}`} headers={["Value (JSON)", "Weight (%)"]} actions={!readOnly}>
        {rule.split.map((row, j) => (
          <tr key={row.key}>
            <td>
              <input id={`${id}-s${row.key}`} class="mono" aria-label={`Value ${j + 1} of the split of rule ${n} (JSON)`} aria-describedby={`${id}-s${row.key}-check`} value={row.text} readOnly={readOnly} autoComplete="off" spellcheck={false} onInput={(e) => setRow(j, { text: e.currentTarget.value })} />
              <CheckNote config={config} text={row.text} saved={row.saved} id={`${id}-s${row.key}-check`} />
            </td>
            <td>
              <input
                type="number"
                min={0}
                max={100}
                step={1}
                aria-label={`Weight of value ${j + 1} of rule ${n} (%)`}
                aria-describedby={`${id}-shares`}
                aria-invalid={Number.isNaN(weightOf(row)) || sum !== 100 ? "true" : undefined}
                value={row.weight}
                readOnly={readOnly}
                onInput={(e) => setRow(j, { weight: e.currentTarget.value })}
              />
            </td>
            {!readOnly && (
              <td>
                <button type="button" class="secondary small" aria-label={`Remove value ${j + 1} of the split of rule ${n}`} disabled={rule.split.length === 1} onClick={() => onChange({ split: rule.split.filter((_, k) => k !== j) })}>
                  Remove
                </button>
              </td>
            )}
          </tr>
        ))}
      </Table>
      <div aria-hidden="true" style={{ display: "flex", height: "14px", maxWidth: "520px", border: "1px solid var(--border)", borderRadius: "4px", overflow: "hidden", margin: "8px 0 4px" }}>
        {rule.split.map((row, j) => (
          <span key={row.key} style={{ width: `${Math.min(100, Math.max(0, weightOf(row) || 0))}%`, background: SEGMENT_COLOURS[j % SEGMENT_COLOURS.length] }} />
        ))}
      </div>
      <p class="small" id={`${id}-shares`}>
        Shares: {sharesText(rule)} (total {sum}%)
      </p>
      {sum !== 100 && (
        <p class="warning">
          <strong>The weights sum to {sum}%:</strong> they must sum to 100% before the rules can be saved.
        </p>
      )}
      <div class="row">
        {!readOnly && (
          <button type="button" class="secondary small" aria-label={`Add value to the split of rule ${n}`} onClick={addRow}>
            Add value
          </button>
        )}
        <div class="field">
          <label for={`${id}-unit`}>
            Unit<span class="visually-hidden"> of the split of rule {n}</span>
          </label>
          <input id={`${id}-unit`} value={rule.unit} placeholder="user_id" readOnly={readOnly} autoComplete="off" onInput={(e) => onChange({ unit: e.currentTarget.value })} />
        </div>
      </div>
    </>
  );
}
