import { apiOf, call } from "../../../web/dashboard/api";
import { Badge } from "../../../web/dashboard/ui";
import type { opsRoutes } from "../routes";

export const opsApi = apiOf<ReturnType<typeof opsRoutes>>();

export type QueueItem = NonNullable<Awaited<ReturnType<typeof opsApi.api.admin.ops.get>>["data"]>[number];
export type ItemType = QueueItem["type"];
export type ItemStatus = QueueItem["status"];
export type Priority = QueueItem["priority"];

// The server's value sets (the page does not import server code); `satisfies` ties them to the API's types.
export const ITEM_TYPES = ["bug", "feature_request", "error", "alert"] as const satisfies readonly ItemType[];
export const STATUSES = ["pending_approval", "open", "in_progress", "done", "rejected"] as const satisfies readonly ItemStatus[];
export const PRIORITIES = ["high", "medium", "low", "nice_to_have"] as const satisfies readonly Priority[];

export const TYPE_LABELS: Record<ItemType, string> = { bug: "Bug", feature_request: "Feature request", error: "Error", alert: "Alert" };
export const STATUS_LABELS: Record<ItemStatus, string> = { pending_approval: "pending approval", open: "open", in_progress: "in progress", done: "done", rejected: "rejected" };
export const PRIORITY_LABELS: Record<Priority, string> = { high: "high", medium: "medium", low: "low", nice_to_have: "nice to have" };

const STATUS_TONES: Record<ItemStatus, NonNullable<Parameters<typeof Badge>[0]["tone"]>> = { pending_approval: "accent", open: "ok", in_progress: "ok", done: "muted", rejected: "muted" };

/** What a person may do from each status (the server's TRANSITIONS), as buttons: the label, the status it sets, what the status line says after. */
export const NEXT: Record<ItemStatus, { status: ItemStatus; label: string; done: string; danger?: boolean }[]> = {
  pending_approval: [
    { status: "open", label: "Approve", done: "Approved" },
    { status: "rejected", label: "Reject", done: "Rejected", danger: true },
  ],
  open: [
    { status: "in_progress", label: "Start work", done: "Started work on" },
    { status: "done", label: "Mark done", done: "Marked done:" },
    { status: "rejected", label: "Reject", done: "Rejected", danger: true },
  ],
  in_progress: [
    { status: "done", label: "Mark done", done: "Marked done:" },
    { status: "open", label: "Back to open", done: "Moved back to open:" },
  ],
  done: [{ status: "open", label: "Reopen", done: "Reopened" }],
  rejected: [],
};

export const loadItems = (filter: { type?: ItemType; status?: ItemStatus } = {}) => call(opsApi.api.admin.ops.get({ query: filter }));

export function StatusBadge({ status }: { status: ItemStatus }) {
  return (
    <Badge tone={STATUS_TONES[status]} strong={status === "pending_approval"}>
      {STATUS_LABELS[status]}
    </Badge>
  );
}

/** "#42 Dark mode": how an item is named in buttons, messages and the palette. */
export const itemName = (i: Pick<QueueItem, "number" | "title">) => `#${i.number} ${i.title}`;
