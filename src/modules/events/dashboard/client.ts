import { apiOf, call } from "../../../web/dashboard/api";
import type { eventCatalogRoutes } from "../routes";

export const eventApi = apiOf<ReturnType<typeof eventCatalogRoutes>>();

export type CatalogEvent = NonNullable<Awaited<ReturnType<typeof eventApi.api.admin.events.get>>["data"]>[number];
export type EventProperty = CatalogEvent["properties"][number];
/** The types a property is declared with (the server's PROPERTY_TYPES; the page does not import server code). */
export const PROPERTY_TYPES = ["string", "number", "boolean"] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/** The whole catalog, pending events included (metrics' event select reads it too). */
export const loadCatalog = () => call(eventApi.api.admin.events.get({ query: {} }));
