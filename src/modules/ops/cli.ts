import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import type { CreateItemBody, QueueItemSchema, UpdateItemBody } from "./contract";
import type { opsRoutes } from "./routes";
import type { ItemType, Priority, Status } from "./service";
import { CLIENT_FLAGS, YES_FLAG, confirmChange, emit, openClient, str, table, when } from "../../cli/client-command";
import type { ArgValues, Command } from "../../cli/command";

// `svc ops`: the queue of bug reports and feature requests (and the error and alert items svc files itself).

type QueueItem = Static<typeof QueueItemSchema>;
type TextFields = Pick<Static<typeof UpdateItemBody>, "stepsToReproduce" | "actualResult" | "expectedResult" | "useCase">;

/** The queue's admin routes, typed from their own schemas. */
const ops = (client: SvcClient) => client.api<ReturnType<typeof opsRoutes>>().api.admin.ops;
/** One item's routes: its number (42 or #42) or id, as one path segment. */
const item = (client: SvcClient, ref: string) => ops(client)({ id: seg(ref.replace(/^#/, "")) });

/** Every value with what it means (Records, so a value the server adds is a compile error here). */
const TYPES: Record<ItemType, string> = {
  bug: "something is broken",
  feature_request: "something is wanted",
  error: "a tracked error, filed by svc (not by hand)",
  alert: "an alert rule firing, filed by svc (not by hand)",
};
const STATUSES: Record<Status, string> = {
  pending_approval: "filed through the public intake, waiting for a person",
  open: "approved, or filed by a person",
  in_progress: "being worked on",
  done: "finished",
  rejected: "not going to happen (final)",
};
const PRIORITIES: Record<Priority, string> = { high: "first", medium: "the default", low: "later", nice_to_have: "if there is time" };

const names = <K extends string>(r: Record<K, string>) => Object.keys(r) as K[];

function oneOf<K extends string, A extends K = K>(r: Record<K, string>, flag: string, value: string | undefined, allowed: A[] = names(r) as A[]): A | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as A)) throw new UsageError(`--${flag} must be one of ${allowed.join(", ")} (got "${value}")`);
  return value as A;
}

const REF_ARG = "<item>";
const REF_DETAIL = "<item> is the item's number in the project (42, or #42) or its id (fb_…); `svc ops list` shows them.";

function itemText(i: QueueItem): string {
  const lines = [
    `#${i.number} ${i.title} (${i.id})`,
    `  type:      ${i.type}`,
    `  status:    ${i.status} (since ${when(i.statusChangedAt)} by ${i.statusChangedBy})`,
    `  priority:  ${i.priority}`,
    `  filed:     ${when(i.createdAt)} by ${i.reportedBy} (${i.source}${i.sourceRef ? `, about ${i.sourceRef}` : ""})`,
  ];
  if (i.timesFiled > 1) lines.push(`  filed:     ${i.timesFiled} times (its ${i.type === "alert" ? "alert fired" : "error regressed"} again)`);
  const block = (label: string, text: string | null) => {
    if (text === null) return;
    lines.push(`  ${label}:`, ...text.split(/\r?\n/).map((l) => `    ${l}`));
  };
  block("steps to reproduce", i.stepsToReproduce);
  block("actual result", i.actualResult);
  block("expected result", i.expectedResult);
  block("use case", i.useCase);
  return lines.join("\n");
}

const TEXT_FLAGS = {
  steps: { type: "string", value: "TEXT", help: "Steps to reproduce (\\n for line breaks is not expanded: quote real newlines)" },
  actual: { type: "string", value: "TEXT", help: "What happens instead (the actual result)" },
  expected: { type: "string", value: "TEXT", help: "What should happen (the expected result)" },
} as const;

/** The text flags given, as body fields; an empty value clears the field (null). */
function textFields(values: ArgValues, withUseCase: boolean): TextFields {
  const out: TextFields = {};
  const pairs: [string, keyof TextFields][] = [
    ["steps", "stepsToReproduce"],
    ["actual", "actualResult"],
    ["expected", "expectedResult"],
  ];
  if (withUseCase) pairs.push(["use-case", "useCase"]);
  for (const [flag, field] of pairs) {
    const value = str(values, flag);
    if (value !== undefined) out[field] = value === "" ? null : value;
  }
  return out;
}

/** approve and reject: one transition each. */
function decisionCommand(name: "approve" | "reject", summary: string, details: string): Command {
  return {
    name,
    summary,
    args: [REF_ARG],
    details: [REF_DETAIL, details],
    examples: [`svc ops ${name} 42`, `svc ops ${name} fb_7Hq2LmX9pKr4TzV1bN8c --json`],
    flags: { ...(name === "reject" ? { yes: YES_FLAG } : {}), ...CLIENT_FLAGS },
    async run({ values, positionals }) {
      const ref = positionals[0]!;
      const client = openClient(values);
      if (name === "reject") await confirmChange(values, client, `Reject item ${ref}? Rejected is final.`);
      const routes = item(client, ref);
      const decided = await dataOf(name === "approve" ? routes.approve.post() : routes.reject.post());
      emit(values.json, decided, () => `${name === "approve" ? "Approved" : "Rejected"} #${decided.number} ${decided.title}: now ${decided.status}.`);
      return 0;
    },
  };
}

export const opsCommand: Command = {
  name: "ops",
  summary: "The queue of bug reports and feature requests: list, get, create, update, approve, reject",
  details: [
    "Items come from people (here, the dashboard, the API), from the public intake (POST /ops/bug and /ops/feature-request with a client key; they wait in pending_approval), and from svc itself (an error item when a tracked error is new or regresses, an alert item when an alert rule fires).",
    `States: ${names(STATUSES).map((s) => `${s} (${STATUSES[s]})`).join("; ")}. pending_approval → open (approve) or rejected; open → in_progress, done or rejected; in_progress → open or done; done → open.`,
  ],
  examples: ["svc ops list --status pending_approval", "svc ops approve 42", "svc ops create --type bug \"Checkout fails on Safari\" --priority high"],
  subcommands: [
    {
      name: "list",
      summary: "List items: pending approval first, then newest first",
      examples: ["svc ops list", "svc ops list --status pending_approval --type feature_request", "svc ops list --query checkout --json"],
      flags: {
        type: { type: "string", value: "TYPE", help: `Only items of this type: ${names(TYPES).join(", ")}` },
        status: { type: "string", value: "STATUS", help: `Only items in this status: ${names(STATUSES).join(", ")}` },
        query: { type: "string", value: "TEXT", help: "Only items whose title or text fields contain TEXT (case-insensitive)" },
        ...CLIENT_FLAGS,
      },
      async run({ values }) {
        const type = oneOf(TYPES, "type", str(values, "type"));
        const status = oneOf(STATUSES, "status", str(values, "status"));
        const q = str(values, "query");
        // Empty filters are left out, as before.
        const items = await dataOf(ops(openClient(values)).get({ query: { type, status, q: q || undefined } }));
        emit(values.json, items, () => {
          if (items.length === 0) return type || status || q ? "No items match." : "The queue is empty; file one with `svc ops create --type bug <title>`.";
          return table(
            ["#", "TYPE", "STATUS", "PRIORITY", "TITLE", "FILED"],
            items.map((i) => [i.number, i.type, i.status, i.priority, i.title, when(i.createdAt)]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one item with its text fields",
      args: [REF_ARG],
      details: [REF_DETAIL],
      examples: ["svc ops get 42", "svc ops get fb_7Hq2LmX9pKr4TzV1bN8c --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const found = await dataOf(item(openClient(values), positionals[0]!).get());
        emit(values.json, found, () => itemText(found));
        return 0;
      },
    },
    {
      name: "create",
      summary: "File a bug or a feature request (open at once; --json prints its full record)",
      args: ["<title>"],
      details: [
        "--type is bug or feature_request (error and alert items are svc's own). The item gets the project's next number and starts open: only the public intake's items wait for approval.",
        `--priority: ${names(PRIORITIES).map((p) => `${p} (${PRIORITIES[p]})`).join(", ")}.`,
      ],
      examples: ["svc ops create --type bug \"Checkout fails on Safari\" --steps \"Open the cart; press Checkout\" --priority high", "svc ops create --type feature_request \"CSV export\" --json"],
      flags: {
        type: { type: "string", value: "TYPE", help: "bug or feature_request (required)" },
        priority: { type: "string", value: "PRIORITY", help: `${names(PRIORITIES).join(", ")} (default medium)` },
        ...TEXT_FLAGS,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const typeText = str(values, "type");
        if (typeText === undefined) throw new UsageError("--type bug|feature_request is required");
        const type = oneOf(TYPES, "type", typeText, ["bug", "feature_request"])!;
        const body: Static<typeof CreateItemBody> = { type, title: positionals[0]!, ...textFields(values, false) };
        const priority = oneOf(PRIORITIES, "priority", str(values, "priority"));
        if (priority) body.priority = priority;
        for (const [k, v] of Object.entries(body)) if (v === null) delete body[k as keyof typeof body];
        const client = openClient(values);
        const created = await dataOf(ops(client).post(body));
        const filed = await dataOf(item(client, created.id).get());
        emit(values.json, filed, () => `Filed #${filed.number} ${filed.title} (${filed.type}, ${filed.priority}, ${filed.status}).`);
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change an item's title, priority, status or text fields",
      args: [REF_ARG],
      details: [REF_DETAIL, "Only the flags given change; an empty value (--actual \"\") clears a text field. --status follows the states above: any other move is refused naming status."],
      examples: ["svc ops update 42 --status in_progress", "svc ops update 42 --priority high --title \"Checkout fails on Safari 18\"", "svc ops update 42 --status done --json"],
      flags: {
        title: { type: "string", value: "TEXT", help: "A new title for the item (its number stays)" },
        priority: { type: "string", value: "PRIORITY", help: names(PRIORITIES).join(", ") },
        status: { type: "string", value: "STATUS", help: names(STATUSES).join(", ") },
        ...TEXT_FLAGS,
        "use-case": { type: "string", value: "TEXT", help: "Why the feature is wanted" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const body: Static<typeof UpdateItemBody> = { ...textFields(values, true) };
        const title = str(values, "title");
        if (title !== undefined) body.title = title;
        const priority = oneOf(PRIORITIES, "priority", str(values, "priority"));
        if (priority) body.priority = priority;
        const status = oneOf(STATUSES, "status", str(values, "status"));
        if (status) body.status = status;
        if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give --title, --priority, --status, --steps, --actual, --expected or --use-case");
        const updated = await dataOf(item(openClient(values), positionals[0]!).patch(body));
        emit(values.json, updated, () => `Updated #${updated.number}:\n${itemText(updated).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    decisionCommand("approve", "Approve an item waiting in pending_approval (→ open)", "Fires ticket.approved to the project's connectors."),
    decisionCommand("reject", "Reject an item (pending_approval or open → rejected, final)", "Asks first in a terminal; --yes skips the question."),
  ],
};
