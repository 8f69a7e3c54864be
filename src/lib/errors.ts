/** Every error code of the contract (SPEC "Errors"), plus INTERNAL for our own bugs. */
export type ErrorCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "IMMUTABLE_FIELD"
  | "VALIDATION"
  | "APPROVAL_REQUIRED"
  | "CONFLICT"
  | "UNAVAILABLE"
  | "UPSTREAM"
  | "INTERNAL";

const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  IMMUTABLE_FIELD: 409,
  VALIDATION: 400,
  /** A direct publish on an env that requires approval (change requests, issue 30): open a change request instead. */
  APPROVAL_REQUIRED: 409,
  /** What a held change was made against moved since (a stale change request). */
  CONFLICT: 409,
  UNAVAILABLE: 503,
  /** The analytics upstream answered with an error or timed out (SPEC "Time series": 502). */
  UPSTREAM: 502,
  INTERNAL: 500,
};

/**
 * The one error type every module throws. Rendered by the root onError as
 * `{error, code, detail?}` with the status DECISIONS.md fixes for the code.
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: string,
    status?: number,
    /** Extra response headers (Retry-After on 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = status ?? STATUS[code];
  }

  toBody(): ErrorBody | { error: string } {
    // DECISIONS.md: `Unavailable` is 503 with `{"error": "Unavailable"}` and nothing else.
    if (this.code === "UNAVAILABLE") return { error: this.message };
    return this.detail === undefined
      ? { error: this.message, code: this.code }
      : { error: this.message, code: this.code, detail: this.detail };
  }
}

export type ErrorBody = { error: string; code: string; detail?: string };

export const badRequest = (message: string, detail?: string) => new ApiError("BAD_REQUEST", message, detail);
export const unauthorized = (message = "Missing or invalid credentials", detail?: string) =>
  new ApiError("UNAUTHORIZED", message, detail);
export const forbidden = (message: string, detail?: string) => new ApiError("FORBIDDEN", message, detail);
export const notFound = (message: string, detail?: string) => new ApiError("NOT_FOUND", message, detail);
export const alreadyExists = (message: string, detail?: string) => new ApiError("ALREADY_EXISTS", message, detail);
export const validation = (message: string, detail?: string) => new ApiError("VALIDATION", message, detail);
export const immutableField = (message: string, detail?: string) => new ApiError("IMMUTABLE_FIELD", message, detail);
export const bodyTooLarge = () => new ApiError("BAD_REQUEST", "Body too large", undefined, 413);
/** The store cannot take the write now (another process holds its lock): 503, try again after `retryAfterSeconds`. */
export const unavailable = (retryAfterSeconds: number) =>
  new ApiError("UNAVAILABLE", "Unavailable", undefined, 503, { "Retry-After": String(retryAfterSeconds) });
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError("BAD_REQUEST", "Too many requests", undefined, 429, { "Retry-After": String(retryAfterSeconds) });
