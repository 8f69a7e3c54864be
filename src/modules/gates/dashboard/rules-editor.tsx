import type { JSX } from "preact";
import { useId } from "preact/hooks";
import { focusLater } from "../../../web/dashboard/ui";
import { PercentageRollout } from "./percentage-rollout";
import { type DraftCondition, type DraftRule, type FieldRef, GATE_OPS, type GateOp, OP_LABELS, emptyCondition, emptyRule, valueHint, valueKind } from "./client";
import { Table } from "../../../web/dashboard/data-table";

const CONDITION_HEADERS = ["Attribute", "Operator", "Value"];

type Props = {
  draft: DraftRule[];
  onChange: (next: DraftRule[], said?: string) => void;
  readOnly: boolean;
  /** The field a refused publish named, shown on that control. */
  fieldError: FieldRef | null;
  env: string;
};

/**
 * An ordered rule list: per rule its name, pass percentage, unit and
 * conditions. Every control is named with its rule and condition ("Operator
 * of rule 2, condition 1"); the field a refused publish named is marked
 * invalid and described by the server's words.
 */
export function RulesEditor({ draft, onChange, readOnly, fieldError, env }: Props) {
  const base = useId();
  const errorId = `${base}-error`;
  const ids = {
    add: `${base}-add`,
    up: (r: DraftRule) => `${base}-r${r.key}-up`,
    down: (r: DraftRule) => `${base}-r${r.key}-down`,
    addCondition: (r: DraftRule) => `${base}-r${r.key}-addc`,
    attr: (c: DraftCondition) => `${base}-c${c.key}-attr`,
  };

  const setRule = (i: number, patch: Partial<DraftRule>) => onChange(draft.map((r, k) => (k === i ? { ...r, ...patch } : r)));
  const setCondition = (i: number, j: number, patch: Partial<DraftCondition>) =>
    setRule(i, { conditions: draft[i]!.conditions.map((c, k) => (k === j ? { ...c, ...patch } : c)) });

  const move = (i: number, by: -1 | 1) => {
    const next = [...draft];
    const [rule] = next.splice(i, 1);
    next.splice(i + by, 0, rule!);
    onChange(next, `Moved rule ${i + 1} ${by < 0 ? "up" : "down"}: it is now rule ${i + by + 1}`);
    // Focus stays on the rule that moved (its other button when it reached an end).
    const to = i + by;
    focusLater(by < 0 ? (to === 0 ? ids.down(rule!) : ids.up(rule!)) : to === next.length - 1 ? ids.up(rule!) : ids.down(rule!));
  };
  const removeRule = (i: number) => {
    onChange(
      draft.filter((_, k) => k !== i),
      `Removed rule ${i + 1}`,
    );
    focusLater(ids.add);
  };
  const addRule = () => {
    const rule = emptyRule();
    onChange([...draft, rule], `Added rule ${draft.length + 1}`);
    focusLater(`${base}-r${rule.key}-name`);
  };
  const addCondition = (i: number) => {
    const c = emptyCondition();
    setRule(i, { conditions: [...draft[i]!.conditions, c] });
    focusLater(ids.attr(c));
  };
  const removeCondition = (i: number, j: number) => {
    onChange(
      draft.map((r, k) => (k === i ? { ...r, conditions: r.conditions.filter((_, m) => m !== j) } : r)),
      `Removed condition ${j + 1} of rule ${i + 1}`,
    );
    focusLater(ids.addCondition(draft[i]!));
  };

  /** aria attributes of a control, invalid when the refused publish named it. */
  const named = (i: number, j: number | undefined, field: string): { "aria-invalid"?: "true"; "aria-describedby"?: string } => {
    const hit = fieldError && fieldError.rule === i && fieldError.condition === j && fieldError.field === field;
    return hit ? { "aria-invalid": "true", "aria-describedby": errorId } : {};
  };
  const fieldMessage = (i: number, j: number | undefined, field: string | undefined) =>
    fieldError && fieldError.rule === i && fieldError.condition === j && fieldError.field === field ? (
      <p class="error small" id={errorId}>
        {fieldError.path}: {fieldError.message}
      </p>
    ) : null;

  if (draft.length === 0 && readOnly) return <p class="muted">No rules on {env}: off for everyone.</p>;

  return (
    <div>
      {draft.length === 0 && <p class="muted">No rules on {env}: off for everyone. Add a rule to turn it on for someone.</p>}
      <ol class="switch-list">
        {draft.map((rule, i) => {
          const n = i + 1;
          const text = (field: "name" | "percentage" | "unit") => (e: Event) => setRule(i, { [field]: (e.currentTarget as HTMLInputElement).value });
          return (
            <li key={rule.key}>
              <fieldset>
                <legend>
                  Rule {n}
                  {rule.name.trim() ? `: ${rule.name.trim()}` : ""}
                </legend>
                <div class="row">
                  <Labelled id={`${base}-r${rule.key}-name`} label="Name" of={`of rule ${n}`} error={fieldMessage(i, undefined, "name")}>
                    {(id) => <input id={id} value={rule.name} readOnly={readOnly} onInput={text("name")} autoComplete="off" {...named(i, undefined, "name")} />}
                  </Labelled>
                  <Labelled id={`${base}-r${rule.key}-pct`} label="Pass percentage" of={`of rule ${n}`} error={fieldMessage(i, undefined, "passPercentage")}>
                    {(id) => <input id={id} type="number" min={0} max={100} step="any" value={rule.percentage} readOnly={readOnly} onInput={text("percentage")} {...named(i, undefined, "passPercentage")} />}
                  </Labelled>
                  <Labelled id={`${base}-r${rule.key}-unit`} label="Unit" of={`of rule ${n}`} error={fieldMessage(i, undefined, "unit")}>
                    {(id) => <input id={id} value={rule.unit} placeholder="user_id" readOnly={readOnly} onInput={text("unit")} autoComplete="off" {...named(i, undefined, "unit")} />}
                  </Labelled>
                </div>
                {fieldMessage(i, undefined, undefined) ?? fieldMessage(i, undefined, "conditions")}
                {rule.conditions.length === 0 ? (
                  <p class="muted small">No conditions: holds for everyone{Number(rule.percentage) < 100 ? `, of whom ${rule.percentage || "0"}% pass` : ""}.</p>
                ) : (
                  <Table caption={`Conditions of rule ${n}: all must hold`} headers={CONDITION_HEADERS} actions={!readOnly}>
                      {rule.conditions.map((c, j) => (
                        <ConditionRow
                          key={c.key}
                          c={c}
                          where={`of rule ${n}, condition ${j + 1}`}
                          attrId={ids.attr(c)}
                          readOnly={readOnly}
                          named={(field) => named(i, j, field)}
                          message={(field) => fieldMessage(i, j, field)}
                          onChange={(patch) => setCondition(i, j, patch)}
                          onRemove={() => removeCondition(i, j)}
                          removeLabel={`Remove condition ${j + 1} of rule ${n}`}
                        />
                      ))}
                  </Table>
                )}
                {!readOnly && (
                  <div class="actions start">
                    <button type="button" class="secondary small" id={ids.addCondition(rule)} aria-label={`Add condition to rule ${n}`} onClick={() => addCondition(i)}>
                      Add condition
                    </button>
                    <button type="button" class="secondary small" id={ids.up(rule)} aria-label={`Move rule ${n} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                      Up
                    </button>
                    <button type="button" class="secondary small" id={ids.down(rule)} aria-label={`Move rule ${n} down`} disabled={i === draft.length - 1} onClick={() => move(i, 1)}>
                      Down
                    </button>
                    <button type="button" class="danger secondary small" aria-label={`Remove rule ${n}`} onClick={() => removeRule(i)}>
                      Remove
                    </button>
                  </div>
                )}
              </fieldset>
            </li>
          );
        })}
      </ol>
      {!readOnly && (
        <button type="button" class="secondary" id={ids.add} onClick={addRule}>
          Add rule
        </button>
      )}
      {!readOnly && <PercentageRollout draft={draft} onChange={onChange} env={env} />}
    </div>
  );
}

/** A visible short label ("Operator") whose accessible name also says where ("Operator of rule 2"). */
function Labelled({ id, label, of, error, children }: { id: string; label: string; of: string; error?: JSX.Element | null; children: (id: string) => JSX.Element }) {
  return (
    <div class="field">
      <label for={id}>
        {label}
        <span class="visually-hidden"> {of}</span>
      </label>
      {children(id)}
      {error}
    </div>
  );
}

function ConditionRow(props: {
  c: DraftCondition;
  where: string;
  attrId: string;
  readOnly: boolean;
  named: (field: string) => { "aria-invalid"?: "true"; "aria-describedby"?: string };
  message: (field: string | undefined) => JSX.Element | null;
  onChange: (patch: Partial<DraftCondition>) => void;
  onRemove: () => void;
  removeLabel: string;
}) {
  const { c, where, readOnly, named, message, onChange } = props;
  const hintId = useId();
  const kind = valueKind(c.op);
  const hint = valueHint(c.op);
  const valueAttrs = named("value");
  const describedBy = [hint ? hintId : null, valueAttrs["aria-describedby"]].filter(Boolean).join(" ") || undefined;
  return (
    <tr>
      <td>
        <input id={props.attrId} aria-label={`Attribute ${where}`} value={c.attr} readOnly={readOnly} autoComplete="off" onInput={(e) => onChange({ attr: e.currentTarget.value })} {...named("attr")} />
        {message("attr")}
      </td>
      <td>
        <select aria-label={`Operator ${where}`} value={c.op} disabled={readOnly} onChange={(e) => {
            const op = e.currentTarget.value as GateOp;
            // A number field cannot show text: a value that is not a number starts empty there.
            onChange(valueKind(op) === "number" && !Number.isFinite(Number(c.text)) ? { op, text: "" } : { op });
          }} {...named("op")}>
          {GATE_OPS.map((op) => (
            <option key={op} value={op}>
              {OP_LABELS[op]}
            </option>
          ))}
        </select>
        {message("op")}
      </td>
      <td>
        {kind === "none" ? (
          <span class="muted small">no value</span>
        ) : (
          <>
            {kind === "number" ? (
              <input
                aria-label={`Value ${where}`}
                type="number"
                step="any"
                value={c.text}
                readOnly={readOnly}
                onInput={(e) => onChange({ text: e.currentTarget.value })}
                aria-invalid={valueAttrs["aria-invalid"]}
                aria-describedby={describedBy}
              />
            ) : (
              <input
                aria-label={`Value ${where}`}
                value={c.text}
                readOnly={readOnly}
                autoComplete="off"
                spellcheck={false}
                onInput={(e) => onChange({ text: e.currentTarget.value })}
                aria-invalid={valueAttrs["aria-invalid"]}
                aria-describedby={describedBy}
              />
            )}
            {hint && (
              <p class="hint" id={hintId}>
                {hint}
              </p>
            )}
          </>
        )}
        {message("value") ?? message(undefined)}
      </td>
      {!readOnly && (
        <td>
          <button type="button" class="secondary small" aria-label={props.removeLabel} onClick={props.onRemove}>
            Remove
          </button>
        </td>
      )}
    </tr>
  );
}
