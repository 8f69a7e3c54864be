import { dirname } from "node:path";
import { UsageError } from "../lib/usage-error";
import { ApiRequestError, NetworkError, NotSignedInError, type RequestContext } from "./client-errors";

/**
 * How every failure of a command reaches the user: one exit status, one
 * message, and a hint that names the `svc` command that fixes it (never an
 * HTTP route where a command exists). Under --json it is one JSON object on
 * stderr, `{error, code, status?, detail?, hint?}`, whatever went wrong.
 *
 * Exit statuses: 0 ok, 1 the server said no, could not be reached or the
 * user declined, 2 a usage mistake (code USAGE), 3 not signed in
 * (code NOT_SIGNED_IN).
 */

/** A failure the CLI itself decides (an unknown project for bind, a declined prompt): exit 1 unless said otherwise. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly hint?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export type FailureBody = { error: string; code: string; status?: number; detail?: string; hint?: string };
export type Failure = { exitCode: number; body: FailureBody };

function who(ctx: RequestContext): string {
  return ctx.credentialSource === "SERVICE_CLI_TOKEN" ? "SERVICE_CLI_TOKEN (an API token reaches only its own project)" : "you";
}

/** Why the selected project failed, naming where it was chosen and how to choose another. */
function projectHint(ctx: RequestContext): string {
  const id = ctx.projectId ?? "(none)";
  const list = "`svc projects list` shows the projects you can reach";
  switch (ctx.projectSource) {
    case ".service":
      return `project ${id} was chosen by ${ctx.bindingPath} (written by \`svc bind\`), and ${who(ctx)} cannot reach it. ${list}; then run \`svc bind <project id or name>\` in ${dirname(ctx.bindingPath!)}, or delete ${ctx.bindingPath}.`;
    case "--project":
      return `--project ${id} is not a project ${who(ctx)} can reach. ${list}.`;
    case "login":
      return `project ${id} was chosen when you signed in, and you can no longer reach it. ${list}; then \`svc bind <project>\` here, or \`svc login\` again.`;
    case "config.json":
      return `project ${id} comes from project_id in config.json, and ${who(ctx)} cannot reach it. ${list}; then \`svc bind <project>\` here, or fix config.json.`;
    default:
      return `${list}, and \`svc bind <project>\` selects one for this directory.`;
  }
}

/** The segment after `/api/admin/<noun>/` of the request, decoded: the name the user typed. */
function nameIn(path: string, noun: string): string | undefined {
  const m = new RegExp(`^/api/admin/${noun}/([^/?]+)`).exec(path);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

const LIST_COMMANDS: [RegExp, string][] = [
  [/^\/api\/admin\/killswitches\/[^/]+/, "`svc killswitches list` shows the killswitches of the project"],
  [/^\/api\/admin\/configs\/[^/]+/, "`svc configs list` shows the configs of the project"],
  [/^\/api\/admin\/gates\/templates\/[^/]+/, "`svc gates templates list` lists the templates"],
  [/^\/api\/admin\/gates\/[^/]+/, "`svc gates list` shows the gates of the project"],
  [/^\/api\/admin\/events\/[^/]+/, "`svc events list` shows the event catalog"],
  [/^\/api\/admin\/metrics\/[^/]+/, "`svc metrics list` shows the metrics of the project"],
  [/^\/api\/admin\/errors\/[^/]+/, "`svc errors list` shows the tracked errors and their ids"],
  [/^\/api\/admin\/alert-rules\/[^/]+/, "`svc alerts list` shows the alert rules"],
  [/^\/api\/admin\/tokens\/[^/]+/, "`svc tokens list` shows the project's API tokens and their ids"],
  [/^\/api\/admin\/keys\/[^/]+/, "`svc sdk keys list` shows the project's SDK keys and their ids"],
  [/^\/api\/admin\/members\/[^/]+/, "`svc members list` shows the members"],
];

/** The server refused the selected project itself (not a resource in it). */
function isProjectRefusal(err: ApiRequestError): boolean {
  const detail = err.detail ?? "";
  return (err.code === "FORBIDDEN" && detail.startsWith("X-Project-Id:")) || (err.code === "NOT_FOUND" && /\bproject\b/i.test(err.message) && !!err.context?.projectId);
}

/** A hint in `svc` terms for a refusal of the server, when the CLI knows better than the server's (HTTP-worded) detail. */
export function hintFor(err: ApiRequestError): string | undefined {
  const ctx = err.context;
  const detail = err.detail ?? "";
  if (ctx && isProjectRefusal(err)) return projectHint(ctx);
  if (err.code === "BAD_REQUEST" && /No project selected|X-Project-Id header is required/.test(err.message)) {
    return "choose a project: `--project ID`, `svc bind <project>` for this directory, or `svc login --project ID`; `svc projects list` shows yours.";
  }
  if (detail.includes("/api/admin/configs/{id}/drafts")) {
    const env = /"env": "(\w+)"/.exec(detail)?.[1] ?? "ENV";
    const name = (ctx && nameIn(ctx.path, "configs")) ?? "<name>";
    return `save a draft first: \`svc configs set ${name} --env ${env} --value JSON\` (add --publish to publish it at once).`;
  }
  if (err.message === "This token is read-only") {
    return "SERVICE_CLI_TOKEN is a read-only API token. An owner can mint a read-write one with `svc tokens create <name> --access read-write`.";
  }
  if (err.code === "FORBIDDEN" && /API tokens cannot manage/.test(err.message)) {
    return "an API token (SERVICE_CLI_TOKEN) never manages keys, tokens, members or settings: unset it and sign in as an owner with `svc login`.";
  }
  if (err.code === "FORBIDDEN" && /^Your role \((viewer|editor)\)/.test(err.message)) {
    return `${detail ? `${detail.replace(/\.$/, "")}; ` : ""}\`svc members list\` shows who the owners are.`;
  }
  if (err.code === "FORBIDDEN" && /^Projects are created by people/.test(err.message)) {
    return "unset SERVICE_CLI_TOKEN and sign in with `svc login` (SDK keys and API tokens belong to one project).";
  }
  if (detail.includes("GET /api/admin/members")) return "`svc members list` shows the members.";
  if (detail.includes("GET /api/admin/me")) return "`svc whoami` lists your projects and their organisations.";
  if (err.code === "NOT_FOUND" && ctx) {
    // The server's guess at a mistyped name (`name: did you mean "checkout"?`) comes first: it is the likely fix.
    const guess = /^name: (did you mean "[^"]*"\?)$/.exec(detail)?.[1];
    for (const [pattern, hint] of LIST_COMMANDS) if (pattern.test(ctx.path)) return `${guess ? `${guess} ` : ""}${hint}${ctx.projectId ? ` (${ctx.projectId})` : ""}.`;
  }
  return undefined;
}

/** Any error a command threw, as its exit status and the body the user sees. */
export function classify(err: unknown, usagePath?: string): Failure {
  if (err instanceof UsageError) {
    return { exitCode: 2, body: { error: err.message, code: "USAGE", detail: `Run \`svc help${usagePath ? ` ${usagePath}` : ""}\` for usage.` } };
  }
  if (err instanceof NotSignedInError) return { exitCode: 3, body: { error: err.message, code: "NOT_SIGNED_IN" } };
  if (err instanceof ApiRequestError) {
    // A project chosen by a file says so in the message itself: the file is what to fix.
    const ctx = err.context;
    const where = ctx && isProjectRefusal(err) && ctx.projectSource === ".service" ? `: project ${ctx.projectId}, chosen by ${ctx.bindingPath}` : "";
    const body: FailureBody = { error: err.message + where, code: err.code, status: err.status };
    if (err.detail) body.detail = err.detail;
    const hint = hintFor(err);
    if (hint) body.hint = hint;
    return { exitCode: 1, body };
  }
  if (err instanceof NetworkError) return { exitCode: 1, body: { error: err.message, code: "NETWORK" } };
  if (err instanceof CliError) {
    const body: FailureBody = { error: err.message, code: err.code };
    if (err.hint) body.hint = err.hint;
    return { exitCode: err.exitCode, body };
  }
  return { exitCode: 1, body: { error: (err as Error)?.message ?? String(err), code: "ERROR" } };
}

/** Prints a failure on stderr: one JSON object under --json, else `svc <command>: message` and the hint. */
export function reportFailure(failure: Failure, json: boolean, commandPath?: string): number {
  const { body } = failure;
  if (json) {
    console.error(JSON.stringify(body));
    return failure.exitCode;
  }
  const lines = [`svc${commandPath ? ` ${commandPath}` : ""}: ${body.error}${body.status ? ` (${body.code}, HTTP ${body.status})` : ""}`];
  // The hint, in `svc` terms, replaces the server's detail (which names HTTP routes and headers); JSON keeps both.
  if (body.detail && !body.hint) lines.push(body.code === "USAGE" ? body.detail : `  ${body.detail}`);
  if (body.hint) lines.push(`  hint: ${body.hint}`);
  console.error(lines.join("\n"));
  return failure.exitCode;
}
