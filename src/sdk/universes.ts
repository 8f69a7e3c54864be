/**
 * Universes: a unit space split into 10,000 segments by a salted hash of the
 * unit's id (its `user_id` or its `account_id`, as the universe says).
 * Experiments take disjoint ranges of segments; the holdout range is given
 * to none. One implementation, imported by the server and bundled into the
 * SDK, so that both put a unit in the same segment. No imports but the gate
 * evaluator's hash.
 */

import { bucketOf } from "./gates";

/** How many segments a universe has: a segment is a number from 0 to 9,999. */
export const SEGMENTS = 10_000;

/** What the unit id of a universe is read from in an evaluation context. */
export type UnitType = "user_id" | "account_id";

/** `[start, end)` in segments: 0 ≤ start < end ≤ 10,000. */
export type SegmentRange = [number, number];

/** A universe as the snapshot publishes it (`universes: {name: PublishedUniverse}`). */
export type PublishedUniverse = { id: string; unit_type: UnitType; holdout_range: SegmentRange | null; salt: string };

/**
 * The unit's segment in a universe, 0 to 9,999: GrowthBook's hash v2 of the
 * universe's salt and the unit id (`fnv(String(fnv(salt + id))) % 10000`,
 * the gates' bucket times 10,000: the same function, so NOTES.md's vectors
 * hold: ("seed", "a") → 505).
 */
export function segmentOf(salt: string, unitId: string): number {
  // bucketOf is k / 10000 for an integer k; rounding gives k back exactly.
  return Math.round(bucketOf(salt, unitId) * SEGMENTS);
}

/** Whether a segment lies in `[start, end)` (null: no range, so never). */
export function inRange(segment: number, range: SegmentRange | null | undefined): boolean {
  return !!range && segment >= range[0] && segment < range[1];
}

/** Whether the unit is in the universe's holdout: such units are given to no experiment. */
export function isHeldOut(universe: Pick<PublishedUniverse, "salt" | "holdout_range">, unitId: string): boolean {
  return inRange(segmentOf(universe.salt, unitId), universe.holdout_range);
}
