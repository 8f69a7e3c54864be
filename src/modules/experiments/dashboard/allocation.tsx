import { type SegmentMark, SegmentBar } from "../../universes/dashboard/segments";
import { drawable, holdoutText } from "../../universes/dashboard/client";
import { SEGMENTS, allocationText, overlaps } from "./client";

/** Another experiment's allocation in the same universe. */
export type Neighbour = { name: string; allocation: readonly number[] };

const intersection = (a: readonly number[], b: readonly number[]): [number, number] => [Math.max(a[0]!, b[0]!), Math.min(a[1]!, b[1]!)];

/** What stands in this allocation's way: the holdout, running experiments it overlaps. */
export function clashesOf(range: readonly number[], holdout: readonly number[] | null, running: readonly Neighbour[]): string[] {
  const out: string[] = [];
  if (holdout && overlaps(range, holdout)) out.push(`It overlaps the holdout, ${holdoutText(holdout)}: those units go to no experiment.`);
  for (const n of running) if (overlaps(range, n.allocation)) out.push(`It overlaps running experiment ${n.name}, ${allocationText(n.allocation)}: it cannot start while that one runs.`);
  return out;
}

/**
 * A new experiment's default allocation: the first gap clear of the holdout and the running experiments, at most
 * `width` segments (10 %); [0, width) when nothing is free (the drawing then says what it overlaps).
 */
export function freeRange(holdout: readonly number[] | null, running: readonly Neighbour[], width = 1000): [number, number] {
  const taken = [...(holdout ? [holdout] : []), ...running.map((n) => n.allocation)].map((r) => [r[0]!, r[1]!] as const).sort((a, b) => a[0] - b[0]);
  let start = 0;
  for (const [from, to] of taken) {
    if (from > start) break;
    start = Math.max(start, to);
  }
  return start < SEGMENTS ? [start, Math.min(SEGMENTS, start + width, taken.find(([from]) => from > start)?.[0] ?? SEGMENTS)] : [0, width];
}

/**
 * The universe's 10,000 segments with the holdout, the allocations of the
 * other running experiments in it, and this experiment's allocation (where
 * it overlaps one of them, the overlap is marked too), then the same in words.
 * `range` null: not drawable yet (the form says why).
 */
export function AllocationDrawing(props: { name: string; universe: string; range: readonly number[] | null; holdout: readonly number[] | null; running: readonly Neighbour[]; caption?: string }) {
  const { name, universe, range, holdout, running } = props;
  const ok = drawable(range);
  const marks: SegmentMark[] = running.map((n) => ({ range: [n.allocation[0]!, n.allocation[1]!], kind: "other", label: `running experiment ${n.name} ${allocationText(n.allocation)}` }));
  if (ok) {
    marks.push({ range, kind: "this", label: `${name || "this experiment"} ${allocationText(range)}` });
    for (const other of [...(holdout ? [holdout] : []), ...running.map((n) => n.allocation)]) {
      if (overlaps(range, other)) marks.push({ range: intersection(range, other), kind: "clash", label: `overlap at ${allocationText(intersection(range, other))}` });
    }
  }
  const clashes = ok ? clashesOf(range, holdout, running) : [];
  return (
    <figure class="allocation">
      <SegmentBar range={holdout} label={props.caption ?? `Allocation in universe ${universe}`} marks={marks} />
      <div class="allocation-scale" aria-hidden="true">
        <span>0</span>
        <span>{(SEGMENTS / 2).toLocaleString("en")}</span>
        <span>{SEGMENTS.toLocaleString("en")}</span>
      </div>
      <figcaption>
        <ul class="legend">
          <li>
            <span class="swatch swatch-this" aria-hidden="true" /> {name || "This experiment"}: {ok ? allocationText(range) : "not a valid range yet"}
          </li>
          {running.map((n) => (
            <li key={n.name}>
              <span class="swatch swatch-other" aria-hidden="true" /> Running experiment {n.name}: {allocationText(n.allocation)}
            </li>
          ))}
          <li>
            <span class="swatch swatch-holdout" aria-hidden="true" /> {holdout ? `Holdout: ${holdoutText(holdout)}` : "No holdout in this universe"}
          </li>
        </ul>
        {clashes.map((c) => (
          <p key={c} class="error">
            {c}
          </p>
        ))}
      </figcaption>
    </figure>
  );
}
