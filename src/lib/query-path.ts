/**
 * A request path with a query string, for the CLI commands and MCP tools that
 * call list endpoints with optional filters: `withQuery("/api/admin/rollouts",
 * { q, status })`. Parameters that are undefined, null or "" are left out; the
 * rest are URL-encoded in the order given (numbers and booleans as their
 * String(), so false is "false"). No `?` when no parameter remains.
 */
export function withQuery(path: string, params: Record<string, string | number | boolean | undefined | null>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === "") continue;
    query.append(name, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
