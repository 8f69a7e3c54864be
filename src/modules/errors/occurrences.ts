import { newId } from "../../lib/ids";
import type { Tx } from "../../lib/store";
import { type Frame, MESSAGE_MAX, cleanText, normaliseType } from "./fingerprint";
import { type OccurrenceRow, deleteOccurrences, demoteOccurrences, insertOccurrences, occurrenceRowsOf } from "./store";
import { OCCURRENCES_RECENT, OCCURRENCES_SAMPLE, type OccurrenceData, type OccurrenceFrame } from "./types";

// The occurrences kept per tracked error (issue 27, item 2): what one occurrence keeps (every part
// bounded, so that a hostile SDK cannot make an error's page large), and which occurrences stay:
// the last OCCURRENCES_RECENT received and a reservoir sample of OCCURRENCES_SAMPLE older ones.

/** Frames kept per occurrence (innermost first); Sentry's own SDKs send at most 50. */
export const FRAMES_KEPT = 100;
export const NAME_MAX = 256;
export const PATH_MAX = 1024;
export const CONTEXT_LINE_MAX = 256;
export const TAG_MAX = 256;
/**
 * One occurrence's JSON, at most: over it, context lines are dropped from
 * the outermost frames inwards, then the outermost frames themselves.
 * 25 occurrences of an error are so at most about 1.2 MB.
 */
export const OCCURRENCE_BYTES = 48 * 1024;
/** The innermost frames whose context lines are the last thing cut. */
const CONTEXT_KEPT = 10;

/** What an occurrence brings, however it arrived (the service's Occurrence is one). */
export type OccurrenceInput = {
  eventId?: string | null;
  type: string | null;
  message: string;
  frames: Frame[];
  /** Epoch ms. */
  ts: number;
  unitId: string | null;
  props: Record<string, string | number | boolean> | null;
};

// Control characters (but tab), line separators, bidi overrides and BOMs: a context line keeps its indentation, never hidden reordering.
// biome-ignore lint: control characters are what it matches.
const LINE_CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** A source line as shown: no controls, at most CONTEXT_LINE_MAX characters (never half a surrogate pair). */
function line(text: string): string {
  const clean = text.slice(0, CONTEXT_LINE_MAX * 2).replace(LINE_CONTROLS, " ").toWellFormed();
  if (clean.length <= CONTEXT_LINE_MAX) return clean;
  const cut = /[\ud800-\udbff]/.test(clean[CONTEXT_LINE_MAX - 2]!) ? CONTEXT_LINE_MAX - 2 : CONTEXT_LINE_MAX - 1;
  return `${clean.slice(0, cut)}…`;
}

const position = (n: number | undefined) => (n !== undefined && Number.isInteger(n) && n >= 0 && n <= 2_147_483_647 ? n : undefined);

function frameOf(f: Frame): OccurrenceFrame {
  const out: OccurrenceFrame = {};
  const name = (text: string | undefined, max: number) => (text === undefined ? "" : cleanText(text, max));
  const fn = name(f.function, NAME_MAX);
  if (fn) out.function = fn;
  const filename = name(f.filename, PATH_MAX);
  if (filename) out.filename = filename;
  const absPath = name(f.absPath, PATH_MAX);
  if (absPath && absPath !== filename) out.absPath = absPath;
  const module = name(f.module, NAME_MAX);
  if (module) out.module = module;
  const lineno = position(f.lineno);
  if (lineno !== undefined) out.lineno = lineno;
  const colno = position(f.colno);
  if (colno !== undefined) out.colno = colno;
  if (typeof f.inApp === "boolean") out.inApp = f.inApp;
  if (f.preContext?.length) out.preContext = f.preContext.slice(-5).map(line);
  if (typeof f.contextLine === "string") out.contextLine = line(f.contextLine);
  if (f.postContext?.length) out.postContext = f.postContext.slice(0, 5).map(line);
  return out;
}

const scalar = (v: string | number | boolean) => (typeof v === "string" ? cleanText(v, TAG_MAX) : v);

/** One occurrence as kept: cleaned, every string and list bounded, at most OCCURRENCE_BYTES of JSON. */
export function occurrenceData(o: OccurrenceInput): OccurrenceData {
  const tags: Record<string, string | number | boolean> = {};
  let release: string | null = null;
  let environment: string | null = null;
  for (const [k, v] of Object.entries(o.props ?? {})) {
    if (k === "release" && typeof v === "string") release = cleanText(v, TAG_MAX) || null;
    else if (k === "environment" && typeof v === "string") environment = cleanText(v, TAG_MAX) || null;
    else if (Object.keys(tags).length < 50) tags[k] = scalar(v);
  }
  const frames = o.frames.slice(0, FRAMES_KEPT).map(frameOf);
  const data: OccurrenceData = {
    eventId: o.eventId ?? null,
    type: normaliseType(o.type),
    message: cleanText(o.message, MESSAGE_MAX) || "(no message)",
    unitId: o.unitId,
    release,
    environment,
    tags,
    frames,
    framesOmitted: 0,
  };
  // Over the budget: the context lines of frames past the first CONTEXT_KEPT go first (outermost first), then those
  // frames, then the remaining context lines, then frames down to the one that threw.
  let size = JSON.stringify(data).length;
  const dropContext = (downTo: number) => {
    for (let i = frames.length - 1; i >= downTo && size > OCCURRENCE_BYTES; i--) {
      const f = frames[i]!;
      if (!f.preContext && !f.postContext && f.contextLine === undefined) continue;
      delete f.preContext;
      delete f.postContext;
      delete f.contextLine;
      size = JSON.stringify(data).length;
    }
  };
  const dropFrames = (downTo: number) => {
    while (frames.length > downTo && size > OCCURRENCE_BYTES) {
      // Dropping about the share over budget at once keeps this a few stringifies, not one per frame.
      const drop = Math.max(1, Math.ceil((frames.length * (size - OCCURRENCE_BYTES)) / size));
      frames.splice(Math.max(downTo, frames.length - drop));
      size = JSON.stringify(data).length;
    }
  };
  dropContext(CONTEXT_KEPT);
  dropFrames(CONTEXT_KEPT);
  dropContext(0);
  dropFrames(1);
  data.framesOmitted = o.frames.length - frames.length;
  return data;
}

/** New occurrences of one error, in the order received, and how many it had before them. */
export type ErrorBatch = { errorId: string; before: number; occurrences: OccurrenceInput[] };

type Slot = { row: OccurrenceRow } | { index: number };

/**
 * Which occurrences stay, for errors whose counts were read under the
 * project's `errors:` lock in this transaction: occurrence number n (1-based,
 * in the order received) is recent while n > count - OCCURRENCES_RECENT;
 * once older, it passes through a reservoir of OCCURRENCES_SAMPLE slots
 * (algorithm R: an empty slot takes it, else it replaces a random slot with
 * probability OCCURRENCES_SAMPLE / n). Only what stays is written: a batch of
 * 1,000 occurrences of one error inserts at most 25 rows. Rows that leave
 * are deleted in the same transaction, so a reader never sees more.
 */
export async function keepOccurrences(tx: Tx, batches: ErrorBatch[], random: () => number = Math.random): Promise<void> {
  const total = (b: ErrorBatch) => b.before + b.occurrences.length;
  // Only errors some of whose rows leave the recent window have rows to read.
  const crowded = batches.filter((b) => b.before > 0 && total(b) > OCCURRENCES_RECENT).map((b) => b.errorId);
  const existing = await occurrenceRowsOf(tx, crowded);
  const inserts: OccurrenceRow[] = [];
  const demoted: { id: string; slot: number }[] = [];
  const deleted: string[] = [];
  for (const b of batches) {
    const rows = existing.get(b.errorId) ?? [];
    const end = total(b);
    const recentFrom = end - OCCURRENCES_RECENT + 1;
    const slots: (Slot | undefined)[] = new Array(OCCURRENCES_SAMPLE).fill(undefined);
    const bySeq = new Map<number, OccurrenceRow>();
    for (const r of rows) {
      if (r.kept === "sample" && r.slot !== null && Number(r.slot) < OCCURRENCES_SAMPLE && !slots[Number(r.slot)]) slots[Number(r.slot)] = { row: r };
      else if (r.kept === "recent") bySeq.set(Number(r.seq), r);
      // A row in no valid slot (none is written so) is not kept.
      else deleted.push(r.id);
    }
    // Occurrences that leave the recent window now, oldest first: each is an existing recent row or one of the batch.
    for (let n = Math.max(1, b.before - OCCURRENCES_RECENT + 1); n < recentFrom; n++) {
      const candidate: Slot | undefined = n <= b.before ? (bySeq.has(n) ? { row: bySeq.get(n)! } : undefined) : { index: n - b.before - 1 };
      if (!candidate) continue;
      if ("row" in candidate) bySeq.delete(n);
      let slot = slots.indexOf(undefined);
      if (slot < 0) {
        const r = Math.floor(random() * n);
        slot = r < OCCURRENCES_SAMPLE ? r : -1;
      }
      if (slot < 0) {
        if ("row" in candidate) deleted.push(candidate.row.id);
        continue;
      }
      const out = slots[slot];
      if (out && "row" in out) deleted.push(out.row.id);
      slots[slot] = candidate;
    }
    // Recent rows left in the map are still recent; any below the window (none is written so) goes.
    for (const [seq, r] of bySeq) if (seq < recentFrom) deleted.push(r.id);
    slots.forEach((s, slot) => {
      if (!s) return;
      if ("row" in s) {
        if (s.row.kept === "recent") demoted.push({ id: s.row.id, slot });
      } else inserts.push(rowOf(b, s.index, "sample", slot));
    });
    for (let i = Math.max(0, recentFrom - b.before - 1); i < b.occurrences.length; i++) inserts.push(rowOf(b, i, "recent", null));
  }
  await deleteOccurrences(tx, deleted);
  await demoteOccurrences(tx, demoted);
  await insertOccurrences(tx, inserts);
}

function rowOf(b: ErrorBatch, index: number, kept: "recent" | "sample", slot: number | null): OccurrenceRow {
  const o = b.occurrences[index]!;
  return { id: newId("occ"), error_id: b.errorId, seq: b.before + index + 1, kept, slot, ts: new Date(o.ts).toISOString(), data: JSON.stringify(occurrenceData(o)) };
}
