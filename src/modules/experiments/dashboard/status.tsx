import { Badge } from "../../../web/dashboard/ui";
import { type Experiment, statusText } from "./client";

/** The state as a pill: running in the accent colour, an automatic rollback loud, the rest muted; the words say it all. */
export function StatusBadge({ e }: { e: Pick<Experiment, "status" | "outcome"> }) {
  const text = statusText(e);
  if (e.status === "running") return <Badge tone="accent" strong>{text}</Badge>;
  if (e.status === "stopped" && e.outcome?.auto) return <Badge tone="danger" strong>{text}</Badge>;
  if (e.status === "stopped" && e.outcome?.decision === "ship") return <Badge tone="ok">{text}</Badge>;
  return <Badge>{text}</Badge>;
}
