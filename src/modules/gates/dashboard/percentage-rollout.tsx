import { useId } from "preact/hooks";
import { type DraftRule, emptyRule } from "./client";

/**
 * A percentage rollout without writing rules by hand: the share of everyone
 * no earlier rule decided who passes. It edits the list's last rule when that
 * rule has no conditions (a catch-all), else it adds one named "everyone" at
 * the end; the change is published with the rest of the list.
 */
export function PercentageRollout({ draft, onChange, env }: { draft: DraftRule[]; onChange: (next: DraftRule[], said?: string) => void; env: string }) {
  const id = useId();
  const last = draft.at(-1);
  const catchAll = last && last.conditions.length === 0 ? last : undefined;
  const value = catchAll ? catchAll.percentage : "0";
  const set = (text: string) => {
    if (catchAll) onChange(draft.map((r) => (r === catchAll ? { ...r, percentage: text } : r)));
    else onChange([...draft, { ...emptyRule(), name: "everyone", percentage: text }], `Added rule ${draft.length + 1}: everyone, at ${text}%`);
  };
  const numeric = Number(value);
  return (
    <fieldset class="percentage-rollout">
      <legend>Percentage rollout</legend>
      <p class="hint" id={`${id}-hint`}>
        {catchAll
          ? `Of everyone no earlier rule decided, this share passes on ${env} (rule ${draft.length}${catchAll.unit ? `, by ${catchAll.unit}` : ", by user_id"}); each unit stays in or out as the share grows.`
          : `Nobody reaches the end of the rules on ${env} and passes. A share here adds a last rule for everyone else.`}
      </p>
      <div class="row">
        <input
          type="range"
          min={0}
          max={100}
          step={1}
          aria-label={`Percentage rollout on ${env} (slider)`}
          aria-describedby={`${id}-hint`}
          value={Number.isFinite(numeric) ? numeric : 0}
          onInput={(e) => set(e.currentTarget.value)}
        />
        <label for={`${id}-pct`} class="visually-hidden">
          Percentage rollout on {env}
        </label>
        <input id={`${id}-pct`} type="number" min={0} max={100} step="any" value={value} aria-describedby={`${id}-hint`} onInput={(e) => set(e.currentTarget.value)} />
        <span aria-hidden="true">%</span>
      </div>
    </fieldset>
  );
}
