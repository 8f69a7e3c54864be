import { apiOf, call } from "../../../web/dashboard/api";
import { Badge } from "../../../web/dashboard/ui";
import type { errorRoutes } from "../routes";

export const errorApi = apiOf<ReturnType<typeof errorRoutes>>();

export type TrackedError = NonNullable<Awaited<ReturnType<typeof errorApi.api.admin.errors.get>>["data"]>[number];
export type ErrorStatus = TrackedError["status"];
/** The server's statuses (the page does not import server code); regressed is set by svc only. */
export const ERROR_STATUSES = ["unresolved", "regressed", "resolved", "ignored"] as const satisfies readonly ErrorStatus[];

/** How each status's badge looks: a regression stands out. */
export const STATUS_TONES: Record<ErrorStatus, NonNullable<Parameters<typeof Badge>[0]["tone"]>> = { unresolved: "accent", regressed: "danger", resolved: "ok", ignored: "muted" };

export const loadErrors = (status?: ErrorStatus) => call(errorApi.api.admin.errors.get({ query: status ? { status } : {} }));

/** A status as a badge; a regression (it came back after being resolved) in bold. */
export function StatusBadge({ status }: { status: ErrorStatus }) {
  return (
    <Badge tone={STATUS_TONES[status]} strong={status === "regressed"}>
      {status}
    </Badge>
  );
}
