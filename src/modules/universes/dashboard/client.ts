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

/** "segments 0–499 (5 % of units)", or "no holdout". */
export function holdoutText(range: readonly number[] | null): string {
  if (!range || range.length !== 2) return "no holdout";
  const [start, end] = range as [number, number];
  const share = Number((((end - start) / SEGMENTS) * 100).toFixed(2));
  return `segments ${NUMBER.format(start)}–${NUMBER.format(end - 1)} (${share} % of units)`;
}

export { errorsByField } from "../../../web/dashboard/ui";
