import { t, type TSchema } from "elysia";
import { ErrorBodySchema } from "./errors";

/** `{id}` path parameter: the spec's 1..128 characters (an id, or a name where the resource allows). */
export const IdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 128, description: "Id (or name, where the resource allows)" }) });

/** The shared `q` filter of list operations. */
export const ListQuery = t.Object({
  q: t.Optional(
    t.String({ maxLength: 100, description: "Case-insensitive substring over name, title and description (OR-matched)" }),
  ),
});

/**
 * The `q` rule of every list: case-insensitive substring over the resource's
 * text columns, OR-matched; no q (or empty) keeps everything. Done in JS so
 * that case folding is Unicode-aware (SQLite's lower() is ASCII only).
 */
export function filterByQuery<T>(rows: T[], q: string | undefined, texts: (row: T) => (string | null | undefined)[]): T[] {
  if (!q) return rows;
  const needle = q.toLocaleLowerCase();
  return rows.filter((row) => texts(row).some((text) => text?.toLocaleLowerCase().includes(needle)));
}

export type AuthKind = "admin" | "admin+project" | "server" | "client" | "none";

const SECURITY: Record<AuthKind, Record<string, string[]>[]> = {
  admin: [{ bearer: [] }],
  "admin+project": [{ bearer: [] }],
  server: [{ sdkKey: [] }, { bearer: [] }],
  client: [{ sdkKey: [] }],
  none: [],
};

const AUTH_NOTES: Record<AuthKind, string> = {
  admin:
    "Auth: `Authorization: Bearer` admin key, access token or project API token. `X-Project-Id` optional (defaults to the credential's project; one the credential cannot reach is FORBIDDEN).",
  "admin+project":
    "Auth: `Authorization: Bearer` admin credential. `X-Project-Id` **required** (missing is BAD_REQUEST, one the credential cannot reach is FORBIDDEN).",
  server: "Auth: server SDK key in `X-SDK-Key` or `Authorization: Bearer`.",
  client: "Auth: client SDK key in `X-SDK-Key` with scope `tickets:public_create`.",
  none: "",
};

/**
 * OpenAPI description of a route, spread into its options: summary, tag, the
 * credential it takes, its success schemas and every error status it can
 * give (each the one Error schema). Error bodies are produced by the root
 * onError as ready Responses, so listing them here documents without
 * validating them.
 */
export function describe<const R extends Record<number, TSchema> = {}>(options: {
  summary: string;
  tag: string;
  auth: AuthKind;
  errors?: number[];
  description?: string;
  response?: R;
}) {
  const base = options.auth === "none" ? [] : [400, 401, 403];
  const codes = [...new Set([...base, ...(options.errors ?? [])])];
  const errors: Record<number, typeof ErrorBodySchema> = {};
  for (const code of codes) errors[code] = ErrorBodySchema;
  return {
    detail: {
      summary: options.summary,
      tags: [options.tag],
      description: [options.description, AUTH_NOTES[options.auth]].filter(Boolean).join("\n\n"),
      security: SECURITY[options.auth],
    },
    response: { ...errors, ...options.response } as R & Record<number, typeof ErrorBodySchema>,
  };
}

export { ErrorBodySchema };
