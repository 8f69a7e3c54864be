/** What can go wrong in a client call, as the CLI and the MCP tool server report it (errors.ts maps each to an exit status). */

export type ProjectSource = "--project" | ".service" | "login" | "config.json" | "credential";

/** The call cannot be made without signing in first (exit status 3). */
export class NotSignedInError extends Error {}

/** What a refused call was, so that the CLI can say how to fix it in its own terms (errors.ts). */
export type RequestContext = {
  method: string;
  path: string;
  projectId: string | null;
  projectSource: ProjectSource;
  /** The `.service` file that chose the project, when one did. */
  bindingPath?: string;
  credentialSource: "SERVICE_CLI_TOKEN" | "credentials file";
};

/** The server refused the call: carries the contract's `{error, code, detail?}` (exit status 1). */
export class ApiRequestError extends Error {
  /** Set by SvcClient.request: the call that was refused. */
  context?: RequestContext;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** The server could not be reached, or answered something that is not our API (exit status 1). */
export class NetworkError extends Error {}
