import { SEGMENTS, holdoutText } from "./client";

/**
 * A range of segments marked on the bar besides the holdout (the experiments
 * page draws allocations): `kind` picks its look (styles.css `.segments-…`),
 * `label` is what the bar's name says of it ("checkout-button segments 0–2,999").
 */
export type SegmentMark = { range: readonly [number, number]; kind: "this" | "other" | "clash"; label: string };

/**
 * The 10,000 segments of a universe as one bar, the holdout marked on it
 * (and `marks`, when given, drawn over it). Drawn in segment units (the
 * SVG's x axis is 0 to 10,000, stretched to the bar's width), in the theme's
 * colours; screen readers get the same facts as the image's name, and the
 * caption says them in words.
 */
export function SegmentBar({ range, label, caption = false, marks = [] }: { range: readonly number[] | null; label: string; caption?: boolean; marks?: readonly SegmentMark[] }) {
  const holdout = range && range.length === 2 ? (range as [number, number]) : null;
  const text = `${label}: ${SEGMENTS.toLocaleString("en")} segments, ${holdout ? `holdout ${holdoutText(holdout)}` : "no holdout"}${marks.map((m) => `; ${m.label}`).join("")}`;
  // Other ranges first, this one over them, a clash (where it overlaps) on top.
  const layer = { other: 0, this: 1, clash: 2 } as const;
  const ordered = [...marks].sort((a, b) => layer[a.kind] - layer[b.kind]);
  return (
    <div class="segments">
      <svg role="img" aria-label={text} viewBox={`0 0 ${SEGMENTS} 10`} preserveAspectRatio="none" width="100%" height={caption || marks.length > 0 ? 24 : 12} focusable="false">
        <rect class="chart-area" x={0} y={0} width={SEGMENTS} height={10} />
        {holdout && <rect class="badge-danger segments-holdout" fill="currentColor" x={holdout[0]} y={0} width={holdout[1] - holdout[0]} height={10} />}
        {ordered.map((m) => (
          <rect key={`${m.kind}-${m.range[0]}-${m.range[1]}`} class={`segments-mark segments-${m.kind}`} x={m.range[0]} y={m.kind === "this" ? 2 : 0} width={m.range[1] - m.range[0]} height={m.kind === "this" ? 6 : 10} vector-effect="non-scaling-stroke" />
        ))}
        <rect class="chart-grid" fill="none" x={0} y={0} width={SEGMENTS} height={10} vector-effect="non-scaling-stroke" />
      </svg>
      {caption && (
        <p class="hint">
          0 to {SEGMENTS.toLocaleString("en")}: {holdout ? <>the marked part, {holdoutText(holdout)}, is held out: given to no experiment.</> : "no holdout: every segment can go to an experiment."}
        </p>
      )}
    </div>
  );
}
