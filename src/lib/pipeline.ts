/**
 * The pieces of the request pipeline that buildApp wires into Elysia's
 * global hooks: request metadata, body limits, CORS paths, and how errors
 * (ours and Elysia's) become `{error, code, detail?}` responses.
 */

/** Paths a browser SDK may call cross-origin; CORS headers are only given there. */
const CORS_PREFIXES = ["/api/sdk/", "/ofrep/", "/ops/"];

/** `status` is set where the answer bypasses Elysia's `set.status` (error responses, early answers). */
export type RequestMeta = { start: number; id: string; path: string; status?: number };

/** Paths the edge role (`--edge-only`) serves. */
export function isEdgePath(path: string): boolean {
  return path === "/healthz" || path.startsWith("/ops/");
}

export function isCorsPath(path: string): boolean {
  return CORS_PREFIXES.some((p) => path.startsWith(p));
}

export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

type SchemaLike = {
  const?: unknown;
  anyOf?: SchemaLike[];
  type?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minProperties?: number;
};

/** What a (TypeBox) schema expects, in words a caller can act on. */
function expectation(schema: SchemaLike | undefined): string | null {
  if (!schema) return null;
  if (schema.const !== undefined) return `must be ${JSON.stringify(schema.const)}`;
  if (schema.anyOf) {
    if (schema.anyOf.every((b) => b.const !== undefined)) return `must be one of: ${schema.anyOf.map((b) => String(b.const)).join(", ")}`;
    // Elysia adds a numeric-string branch to number fields; describe the real one.
    const real = schema.anyOf.filter((b) => !(b.type === "string" && (b.format === "integer" || b.format === "numeric")));
    if (real.length > 1 && real.every((b) => b.type && b.const === undefined)) return `must be ${real.map((b) => b.type).join(" or ")}`;
    return real.length === 1 ? expectation({ ...real[0], minimum: schema.minimum ?? real[0]!.minimum, maximum: schema.maximum ?? real[0]!.maximum }) : null;
  }
  const range = (lo?: number, hi?: number, unit = "") =>
    lo !== undefined && hi !== undefined ? ` between ${lo} and ${hi}${unit}` : lo !== undefined ? ` of at least ${lo}${unit}` : hi !== undefined ? ` of at most ${hi}${unit}` : "";
  switch (schema.type) {
    case "integer":
      return `must be an integer${range(schema.minimum, schema.maximum)}`;
    case "number":
      return `must be a number${range(schema.minimum, schema.maximum)}`;
    case "string":
      return `must be a string${range(schema.minLength, schema.maxLength, " characters")}`;
    case "boolean":
      return "must be true or false";
    case "array":
      return "must be an array";
    case "object":
      return schema.minProperties ? "must be an object with at least one field" : "must be an object";
    default:
      return null;
  }
}

/** Turns Elysia's validation error into `detail`: one `field: what is wrong` per failing field. */
export function validationDetail(error: unknown): string {
  const all = (error as { all?: { path?: string; message?: string; summary?: string; schema?: SchemaLike }[] }).all;
  if (Array.isArray(all) && all.length > 0) {
    const byPath = new Map<string, string>();
    for (const e of all) {
      const path = (e.path ?? "").replace(/^\//, "").replaceAll("/", ".") || "(body)";
      if (byPath.has(path)) continue;
      const missing = e.message === "Expected required property";
      byPath.set(path, missing ? "is required" : (expectation(e.schema) ?? e.summary ?? e.message ?? "is invalid"));
    }
    return [...byPath].slice(0, 20).map(([path, what]) => `${path}: ${what}`).join("; ");
  }
  return (error as Error).message?.slice(0, 500) ?? "invalid request";
}

/** Requests whose body, sent without Content-Length, passed the limit while it was read. */
export const oversized = new WeakSet<Request>();

/**
 * Counts a body sent without Content-Length (chunked) as it is read: past
 * `max` bytes the read fails and the request is marked, so that onError
 * answers 413 whatever was reading it. Declared lengths are checked up
 * front in onRequest, so Bun's own cap (which answers with an empty body)
 * never has to.
 */
export function limitChunkedBody(request: Request, max: number): Request {
  let seen = 0;
  const limited: Request = new Request(request, {
    body: request.body!.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen <= max) return controller.enqueue(chunk);
          oversized.add(limited);
          controller.error(new Error("Body too large"));
        },
      }),
    ),
    duplex: "half",
  } as RequestInit);
  // Bun's router hands over path parameters on the request itself, and Elysia reads them from there.
  Object.defineProperty(limited, "params", { value: (request as Request & { params?: unknown }).params });
  return limited;
}

export function errorResponse(status: number, body: unknown, m: RequestMeta | undefined, extra?: Record<string, string>) {
  const headers: Record<string, string> = { "content-type": "application/json", ...extra };
  if (m) {
    headers["x-request-id"] = m.id;
    m.status = status;
  }
  return new Response(JSON.stringify(body), { status, headers });
}
