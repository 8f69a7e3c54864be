/**
 * The first path segment of every dashboard page: the server answers these
 * (and `/`) with the dashboard document; the browser router does the rest.
 * A module that adds pages adds its section here, in the same change.
 * Data only: the server imports this file, never the pages.
 */
export const DASHBOARD_SECTIONS = ["killswitches", "gates", "segments", "attributes", "events", "metrics", "queue", "errors", "alerts", "universes", "experiments", "rollouts", "schedules", "requests", "stale-flags", "connectors", "i18n", "configs", "keys", "install", "growthbook", "relays", "tokens", "definitions", "members", "settings", "account", "audit"] as const;

export type DashboardSection = (typeof DASHBOARD_SECTIONS)[number];
