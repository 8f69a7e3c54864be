import { apiOf, call } from "../../../web/dashboard/api";
import type { requestRoutes } from "../routes";

export const requestApi = apiOf<ReturnType<typeof requestRoutes>>();

export type ChangeRequest = NonNullable<Awaited<ReturnType<typeof requestApi.api.admin.requests.get>>["data"]>[number];
export type RequestChange = ChangeRequest["changes"][number];
export type ChangeKindInfo = NonNullable<Awaited<ReturnType<typeof requestApi.api.admin.requests.kinds.get>>["data"]>[number];

export const loadRequests = (query: { q?: string; state?: string } = {}) => call(requestApi.api.admin.requests.get({ query }));
/** One request with each change's diff (current and proposed: the list leaves them out). */
export const loadRequest = (id: string) => call(requestApi.api.admin.requests({ id }).get());
export const loadKinds = () => call(requestApi.api.admin.requests.kinds.get());

export const requestHref = (r: Pick<ChangeRequest, "id">) => `/requests/${encodeURIComponent(r.id)}`;

export const TONE = { open: "accent", approved: "ok", applied: "ok", rejected: "danger", withdrawn: "muted", stale: "danger" } as const;
