import { SEGMENTS, holdoutText } from "./client";

/**
 * The 10,000 segments of a universe as one bar, the holdout marked on it.
 * Drawn in segment units (the SVG's x axis is 0 to 10,000, stretched to the
 * bar's width), in the theme's colours; screen readers get the same facts
 * as the image's name, and the caption says them in words.
 */
export function SegmentBar({ range, label, caption = false }: { range: readonly number[] | null; label: string; caption?: boolean }) {
  const holdout = range && range.length === 2 ? (range as [number, number]) : null;
  const text = `${label}: ${SEGMENTS.toLocaleString("en")} segments, ${holdout ? `holdout ${holdoutText(holdout)}` : "no holdout"}`;
  return (
    <div class="segments">
      <svg role="img" aria-label={text} viewBox={`0 0 ${SEGMENTS} 10`} preserveAspectRatio="none" width="100%" height={caption ? 24 : 12} focusable="false">
        <rect class="chart-area" x={0} y={0} width={SEGMENTS} height={10} />
        {holdout && <rect class="badge-danger segments-holdout" fill="currentColor" x={holdout[0]} y={0} width={holdout[1] - holdout[0]} height={10} />}
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
