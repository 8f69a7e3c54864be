/**
 * Id lists as people bring them (a CSV export, one id per line) and as they travel (in parts under the body
 * limit). Shared by the CLI and the dashboard, so that both read a file and send it alike: no server code and
 * no Node built-ins here (the dashboard bundles it).
 */

/** The server's limit on one list (IDS_MAX in service.ts). */
export const IDS_MAX = 100_000;
/**
 * The JSON bytes of ids one request carries. The server reads at most 1 MiB a body (by default): the rest of a
 * body (name, description, conditions) gets what is left, so a list of any length is sent in parts this size.
 */
export const CHUNK_BYTES = 768 * 1024;

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text).length;

/** One CSV field at the start of `line`: quoted ("a ""b""", …) or up to the first comma, tab or semicolon. */
function firstColumn(line: string): string {
  if (line.startsWith('"')) {
    let out = "";
    for (let i = 1; i < line.length; i++) {
      if (line[i] === '"') {
        if (line[i + 1] === '"') {
          out += '"';
          i++;
        } else return out;
      } else out += line[i];
    }
    return out;
  }
  const end = line.search(/[,\t;]/);
  return (end === -1 ? line : line.slice(0, end)).trim();
}

/**
 * The ids of a file: a CSV (its first column) or one id per line. Blank lines are skipped, and a first line equal
 * to the attribute (a header such as `user_id`) too. Duplicates are dropped, the first kept, as the server does.
 * `header` says whether a header line was skipped.
 */
export function readIds(text: string, attribute: string): { ids: string[]; header: boolean } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r\n|\n|\r/);
  const ids: string[] = [];
  const seen = new Set<string>();
  let first = true;
  let header = false;
  for (const line of lines) {
    const id = firstColumn(line.trim());
    if (id === "") continue;
    if (first && id === attribute) header = true;
    const skip = first && id === attribute;
    first = false;
    if (skip || seen.has(id)) continue;
    seen.add(id);
    ids.push(id);
  }
  return { ids, header };
}

export const parseIdsText = (text: string, attribute: string): string[] => readIds(text, attribute).ids;

/** The list in parts whose JSON stays under `firstBytes` (the first part, which shares its body with other fields) and CHUNK_BYTES. */
export function chunkIds(ids: readonly string[], firstBytes = CHUNK_BYTES): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let bytes = 2;
  let budget = firstBytes;
  for (const id of ids) {
    const size = bytesOf(JSON.stringify(id)) + 1;
    if (current.length > 0 && bytes + size > budget) {
      chunks.push(current);
      current = [];
      bytes = 2;
      budget = CHUNK_BYTES;
    }
    current.push(id);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** What the fields other than the ids leave of the first body. */
export const firstBudget = (body: object) => Math.max(64 * 1024, CHUNK_BYTES - bytesOf(JSON.stringify(body)));

export type IdsPatch = { ids?: string[]; addIds?: string[]; removeIds?: string[] };

/**
 * The PATCH bodies that make a change to a list (the first also carries `fields`): a whole new list (`replace`) in
 * one body when it fits, else its difference from `current` (which it then needs); removals first, then additions,
 * so that no unit that stays in the list ever leaves it on the way, and the list never passes the limit.
 */
export function idPatches<F extends object>(fields: F, change: { replace?: readonly string[]; current?: readonly string[]; add?: readonly string[]; remove?: readonly string[] }): (F & IdsPatch)[] {
  let remove = change.remove ?? [];
  let add = change.add ?? [];
  if (change.replace !== undefined) {
    const whole = chunkIds(change.replace, firstBudget(fields));
    if (whole.length <= 1) return [{ ...fields, ids: whole[0] ?? [] }];
    if (!change.current) throw new Error("a list larger than one body replaces another through their difference: give `current`");
    const wanted = new Set(change.replace);
    const had = new Set(change.current);
    remove = change.current.filter((id) => !wanted.has(id));
    add = change.replace.filter((id) => !had.has(id));
  }
  const removeChunks = chunkIds(remove, firstBudget(fields));
  const addChunks = chunkIds(add, removeChunks.length ? CHUNK_BYTES : firstBudget(fields));
  const patches: IdsPatch[] = [...removeChunks.map((removeIds) => ({ removeIds })), ...addChunks.map((addIds) => ({ addIds }))];
  if (patches.length === 0) patches.push({});
  return patches.map((p, i) => (i === 0 ? { ...fields, ...p } : (p as F & IdsPatch)));
}
