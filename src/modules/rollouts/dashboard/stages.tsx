import { Badge } from "../../../web/dashboard/ui";
import { type Rollout, STATUS_TEXT, type StageState, minutesText, pctText, positionText, stageState } from "./client";

// Colours are the theme's variables (light and dark), set through the style object (the CSP allows no style attributes in markup).
const CELL: Record<StageState, Record<string, string>> = {
  done: { background: "color-mix(in srgb, var(--accent) 22%, var(--bg))", color: "var(--fg)", borderColor: "var(--accent)" },
  current: { background: "var(--accent)", color: "var(--accent-fg)", borderColor: "var(--accent)", fontWeight: "700" },
  next: { background: "var(--bg)", color: "var(--muted)", borderColor: "var(--border)", borderStyle: "dashed" },
};
const STATE_TEXT: Record<StageState, string> = { done: "done", current: "current", next: "to come" };

/**
 * The stages as a bar: one cell per stage (its percent, and its minimum
 * minutes unless `compact`), the done ones filled lightly and ticked, the
 * current one filled and marked (aria-current="step"), the ones to come
 * dashed. An ordered list, so a screen reader hears every stage and its
 * state; the list's name says the position in words.
 */
export function StageBar({ r, compact }: { r: Pick<Rollout, "status" | "stage" | "stages" | "percent" | "subject">; compact?: boolean }) {
  const paused = r.status === "paused";
  return (
    <ol
      class="stage-bar"
      aria-label={`Stages of ${r.subject}: ${positionText(r)}${paused ? ", paused" : ""}`}
      style={{ display: "flex", gap: "3px", listStyle: "none", margin: compact ? "2px 0" : "8px 0", padding: 0, minWidth: compact ? "160px" : undefined, maxWidth: "960px" }}
    >
      {r.stages.map((s, i) => {
        const state = stageState(r, i);
        return (
          <li
            key={i}
            aria-current={state === "current" ? "step" : undefined}
            style={{
              flex: "1 1 0",
              minWidth: 0,
              border: "1px solid",
              borderRadius: "4px",
              padding: compact ? "0 4px" : "6px 8px",
              textAlign: "center",
              whiteSpace: "nowrap",
              fontSize: compact ? "0.8em" : undefined,
              fontVariantNumeric: "tabular-nums",
              ...CELL[state],
            }}
          >
            <span aria-hidden="true">{state === "done" ? "✓ " : state === "current" ? (paused ? "❚❚ " : "▶ ") : ""}</span>
            {pctText(s.percent)}
            {!compact && <div style={{ fontSize: "0.85em", fontWeight: "400" }}>{minutesText(s.minutes)}</div>}
            <span class="visually-hidden">
              {compact ? `, ${minutesText(s.minutes)}` : ""}, stage {i + 1}: {state === "current" && paused ? "current, paused" : STATE_TEXT[state]}
            </span>
          </li>
        );
      })}
    </ol>
  );
}

/** The status as a pill: running in the accent colour, rolled back or paused by the monitor loud, completed ok. */
export function StatusBadge({ r }: { r: Pick<Rollout, "status" | "outcome"> }) {
  const text = STATUS_TEXT[r.status] + (r.outcome?.auto && r.status !== "completed" ? " automatically" : "");
  if (r.status === "running") return <Badge tone="accent" strong>{text}</Badge>;
  if (r.status === "rolled_back" || (r.status === "paused" && r.outcome?.auto)) return <Badge tone="danger" strong>{text}</Badge>;
  if (r.status === "completed") return <Badge tone="ok">{text}</Badge>;
  return <Badge>{text}</Badge>;
}
