import { treaty } from "@elysiajs/eden";
import type { Elysia } from "elysia";

/** An error answer of the admin API, in its own words ({error, code, detail}). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

const PROJECT_KEY = "svc.project";
let projectId: string | null = localStorage.getItem(PROJECT_KEY);

/** The project every call is for (X-Project-Id); remembered per browser. */
export function currentProject(): string | null {
  return projectId;
}

export function selectProject(id: string): void {
  projectId = id;
  localStorage.setItem(PROJECT_KEY, id);
}

/** The double-submit CSRF token: the `svc_csrf` cookie, echoed as X-CSRF-Token on every write. */
export function csrfToken(): string {
  const match = /(?:^|;\s*)svc_csrf=([^;]*)/.exec(document.cookie);
  return match ? decodeURIComponent(match[1]!) : "";
}

function headers(): Record<string, string> {
  const h: Record<string, string> = { "x-csrf-token": csrfToken() };
  if (projectId) h["x-project-id"] = projectId;
  return h;
}

/**
 * A typed client of one module's routes (Eden Treaty over the route's own
 * TypeBox schemas: a renamed field or route fails the type check, not the
 * user). Same origin, so the session cookie goes along.
 */
// biome-ignore lint: any Elysia app type
export function apiOf<App extends Elysia<any, any, any, any, any, any, any>>() {
  return treaty<App>(location.origin, { headers: () => headers(), fetch: { credentials: "same-origin" } });
}

type EdenResult<T> = { data: T | null; error: { status: unknown; value: unknown } | null; status: number };

/** The data of a call, or an ApiFailure; a session that ended sends the person to sign in and back. */
export async function call<T>(pending: Promise<EdenResult<T>>): Promise<T> {
  const result = await pending;
  if (!result.error) return result.data as T;
  const body = (result.error.value ?? {}) as { error?: string; code?: string; detail?: string; message?: string };
  if (result.status === 401) {
    location.assign(`/signin?redirect=${encodeURIComponent(location.pathname + location.search)}`);
  }
  throw new ApiFailure(result.status, body.code ?? "ERROR", body.error ?? body.message ?? `Request failed (HTTP ${result.status})`, body.detail);
}

/** A message for any failure, with the API's detail when it has one. */
export function describeError(err: unknown): string {
  if (err instanceof ApiFailure) return err.detail ? `${err.message}: ${err.detail}` : err.message;
  return err instanceof Error ? err.message : String(err);
}
