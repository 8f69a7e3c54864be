import { Elysia } from "elysia";
import { ApiError, badRequest } from "../../lib/errors";
import { jsonObjectOf, objectBodyHooks } from "../../lib/http";
import { MAX_BODY_DEPTH } from "../../lib/pipeline";

// The apply route reads a document as JSON or, sent as `Content-Type: application/yaml` (or text/plain), as the YAML
// `svc export` writes: the dashboard's paste box and `curl --data-binary @svc.yaml` send the file as it is,
// and a browser has no YAML parser without a new dependency. Otherwise it is jsonObjectBody (lib/http).
// The byte-level depth check in front of every route sees brackets only, not YAML's indentation, so the
// parsed value is walked here: as deep and as large as a JSON body may be, never more.

/**
 * YAML when the type says so, or text/plain not opening as JSON does (a browser's typed client sends any text
 * as text/plain, whatever type it was asked for); JSON otherwise, with JSON's words for its mistakes.
 */
const isYaml = (contentType: string | null, text: string) =>
  contentType !== null && (/\b(?:application|text)\/(?:x-)?yaml\b/i.test(contentType) || (/^text\/plain\b/i.test(contentType) && !/^\s*[{[]/.test(text)));

/** Whether `value` nests deeper than MAX_BODY_DEPTH or holds more nodes than `budget` (aliases repeat nodes). */
function tooLarge(value: unknown, budget: number): string | null {
  let nodes = 0;
  const walk = (v: unknown, depth: number): string | null => {
    if (++nodes > budget) return "aliases repeat more than the text holds";
    if (typeof v !== "object" || v === null) return null;
    if (depth >= MAX_BODY_DEPTH) return `at most ${MAX_BODY_DEPTH} levels of lists/maps`;
    for (const child of Object.values(v)) {
      const why = walk(child, depth + 1);
      if (why) return why;
    }
    return null;
  };
  return walk(value, 0);
}

/** YAML text as a document object, or why it is not one (BAD_REQUEST for text that is not YAML, as for bad JSON). */
export function yamlObjectOf(text: string): Record<string, unknown> | ApiError {
  let parsed: unknown;
  try {
    parsed = Bun.YAML.parse(text);
  } catch (err) {
    return badRequest("Malformed request body", `body: expected valid YAML (${(err as Error).message.split("\n")[0]})`);
  }
  const why = tooLarge(parsed, text.length + 1);
  if (why) return badRequest("Body nested too deeply", `body: ${why}`);
  // The same object check as a JSON body (and the same words).
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : jsonObjectOf(JSON.stringify(parsed ?? null));
}

/** `documentBody: true`: jsonObjectBody that also reads `application/yaml` (list it after `admin`, as jsonObjectBody). */
export const documentBodyPlugin = new Elysia({ name: "definitions-document-body" }).macro({
  documentBody: (_enabled: true) => objectBodyHooks((text, request) => (isYaml(request.headers.get("content-type"), text) ? yamlObjectOf(text) : jsonObjectOf(text))),
});
