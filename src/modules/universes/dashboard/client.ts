import { call, apiOf } from "../../../web/dashboard/api";
import type { universeRoutes } from "../routes";

export const universeApi = apiOf<ReturnType<typeof universeRoutes>>();

export type Universe = NonNullable<Awaited<ReturnType<typeof universeApi.api.admin.universes.get>>["data"]>[number];

/** The server's unit types (the page does not import server code). */
export const UNIT_TYPES = ["user_id", "account_id"] as const;
export type UnitType = (typeof UNIT_TYPES)[number];
export const UNIT_TYPE_LABELS: Record<UnitType, string> = {
  user_id: "user_id: a person",
  account_id: "account_id: an account (account-level experiments)",
};

/** How many segments a universe has (src/sdk/universes.ts SEGMENTS). */
export const SEGMENTS = 10_000;

export const loadUniverses = () => call(universeApi.api.admin.universes.get({ query: {} }));

const NUMBER = new Intl.NumberFormat("en");

/** The share of the universe's units a [start, end) range of segments holds, as a number of percent (0.5, 30). */
export function segmentShare(range: readonly number[]): number {
  return Number(((((range[1] ?? 0) - (range[0] ?? 0)) / SEGMENTS) * 100).toFixed(2));
}

/** A range of segments, a holdout or an experiment's allocation: "segments 0–2,999 (30 % of units)". */
export function segmentsText(range: readonly number[]): string {
  const [start, end] = range as [number, number];
  return `segments ${NUMBER.format(start)}–${NUMBER.format(end - 1)} (${segmentShare(range)} % of units)`;
}

/** "segments 0–499 (5 % of units)", or "no holdout". */
export function holdoutText(range: readonly number[] | null): string {
  return range && range.length === 2 ? segmentsText(range) : "no holdout";
}

/** A typed range can be drawn: whole segments, start below end, within the universe. */
export function drawable(range: readonly number[] | null): range is [number, number] {
  return !!range && range.length === 2 && range.every(Number.isInteger) && range[0]! >= 0 && range[0]! < range[1]! && range[1]! <= SEGMENTS;
}
