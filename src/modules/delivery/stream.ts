import type { Env } from "../../lib/envs";
import type { SnapshotEntry, SnapshotSource } from "./snapshot";

export const DEFAULT_HEARTBEAT_MS = 15_000;

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(": ping\n\n");

/** Each entry's event bytes, made once however many streams send them (an entry never changes). */
const events = new WeakMap<SnapshotEntry, Uint8Array>();

/**
 * One SSE event; its id is `<epoch>-<revision>`, so a reconnecting client says
 * exactly what it has (a revision number alone could name other content after
 * a restore).
 */
export function snapshotEvent(entry: SnapshotEntry): Uint8Array {
  let bytes = events.get(entry);
  if (!bytes) {
    // The snapshot JSON is one line (JSON.stringify escapes newlines), so one `data:` field carries it.
    bytes = encoder.encode(`id: ${entry.eventId}\nevent: snapshot\ndata: ${entry.json}\n\n`);
    events.set(entry, bytes);
  }
  return bytes;
}

/** How long a client may leave events unread before its stream is closed (it reconnects with Last-Event-ID). */
export const SLOW_CLIENT_MS = 60_000;

/**
 * The Server-Sent Events reply of `GET /api/sdk/v1/stream`: the current
 * snapshot unless the client's Last-Event-ID already names it, then one event
 * per new revision, and a comment line every `heartbeatMs` so proxies and
 * idle timers keep the connection. Everything is released when the client
 * goes away (stream cancel or request abort, whichever comes first), and
 * `onClose` runs once.
 *
 * Back-pressure: an event is queued only while the client keeps up
 * (`desiredSize > 0`). Otherwise only the newest snapshot is kept aside (each
 * event carries the whole snapshot, so older ones are worthless) and sent
 * when the client reads again; a client that reads nothing for
 * SLOW_CLIENT_MS is disconnected. Memory per stream stays bounded.
 */
export function snapshotStream(
  snapshots: Pick<SnapshotSource, "subscribe" | "cached">,
  input: {
    projectId: string;
    env: Env;
    first: SnapshotEntry;
    lastEventId: string | null;
    heartbeatMs: number;
    signal: AbortSignal;
    onClose?: () => void;
    /** The bytes of one entry's event (default `snapshotEvent`; GrowthBook's `/sub/{key}` sends its own payload). */
    render?: (entry: SnapshotEntry) => Uint8Array;
  },
): Response {
  const { projectId, env, first, lastEventId, heartbeatMs, signal } = input;
  const render = input.render ?? snapshotEvent;
  let cleanup = () => {};
  let flush = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      let sentRevision = lastEventId?.trim() === first.eventId ? first.snapshot.revision : -1;
      /** The newest entry the client has not been sent yet because it was not reading. */
      let held: SnapshotEntry | null = null;
      let stalledSince: number | null = null;
      const enqueue = (chunk: Uint8Array) => {
        try {
          controller.enqueue(chunk);
        } catch {
          cleanup();
        }
      };
      const keepingUp = () => (controller.desiredSize ?? 1) > 0;
      const send = (entry: SnapshotEntry) => {
        if (closed || entry.snapshot.revision <= sentRevision) return;
        if (!keepingUp()) {
          held = entry;
          stalledSince ??= Date.now();
          return;
        }
        held = null;
        stalledSince = null;
        sentRevision = entry.snapshot.revision;
        enqueue(render(entry));
      };
      flush = () => {
        if (held && keepingUp()) send(held);
        else if (!held) stalledSince = null;
      };
      const unsubscribe = snapshots.subscribe(projectId, env, send);
      const heartbeat = setInterval(() => {
        if (keepingUp()) {
          flush();
          if (!held) enqueue(HEARTBEAT);
          return;
        }
        stalledSince ??= Date.now();
        if (Date.now() - stalledSince > SLOW_CLIENT_MS) cleanup();
      }, heartbeatMs);
      cleanup = () => {
        if (closed) return;
        closed = true;
        held = null;
        clearInterval(heartbeat);
        unsubscribe();
        signal.removeEventListener("abort", cleanup);
        input.onClose?.();
        try {
          controller.close();
        } catch {}
      };
      if (signal.aborted) return cleanup();
      signal.addEventListener("abort", cleanup);
      // A publish may have landed between `first` and the subscription: send whatever is current now.
      const current = snapshots.cached(projectId, env);
      if (current) send(current);
    },
    pull() {
      flush();
    },
    cancel() {
      cleanup();
    },
  });

  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      // Tells nginx-style proxies not to buffer the stream.
      "x-accel-buffering": "no",
    },
  });
}
