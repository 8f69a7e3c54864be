import type { Env } from "../projects/service";
import type { SnapshotEntry, SnapshotService } from "./snapshot";

export const DEFAULT_HEARTBEAT_MS = 15_000;

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(": ping\n\n");

/** One SSE event: the revision as its id, so a reconnecting client can say what it already has. */
export function snapshotEvent(entry: SnapshotEntry): Uint8Array {
  // The snapshot JSON is one line (JSON.stringify escapes newlines), so one `data:` field carries it.
  return encoder.encode(`id: ${entry.snapshot.revision}\nevent: snapshot\ndata: ${entry.json}\n\n`);
}

/**
 * The Server-Sent Events reply of `GET /api/sdk/v1/stream`: the current
 * snapshot unless the client's Last-Event-ID already names it, then one event
 * per new revision, and a comment line every `heartbeatMs` so proxies and
 * idle timers keep the connection. Everything is released when the client
 * goes away (stream cancel or request abort, whichever comes first).
 */
export function snapshotStream(
  snapshots: SnapshotService,
  input: { projectId: string; env: Env; lastEventId: string | null; heartbeatMs: number; signal: AbortSignal },
): Response {
  const { projectId, env, lastEventId, heartbeatMs, signal } = input;
  const first = snapshots.get(projectId, env);
  let cleanup = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      let sentRevision = lastEventId?.trim() === String(first.snapshot.revision) ? first.snapshot.revision : -1;
      const send = (entry: SnapshotEntry) => {
        if (closed || entry.snapshot.revision <= sentRevision) return;
        sentRevision = entry.snapshot.revision;
        try {
          controller.enqueue(snapshotEvent(entry));
        } catch {
          cleanup();
        }
      };
      const unsubscribe = snapshots.subscribe(projectId, env, send);
      const heartbeat = setInterval(() => {
        try {
          controller.enqueue(HEARTBEAT);
        } catch {
          cleanup();
        }
      }, heartbeatMs);
      cleanup = () => {
        if (closed) return;
        closed = true;
        clearInterval(heartbeat);
        unsubscribe();
        signal.removeEventListener("abort", cleanup);
        try {
          controller.close();
        } catch {}
      };
      if (signal.aborted) return cleanup();
      signal.addEventListener("abort", cleanup);
      // A publish may have landed between `first` and the subscription: send whatever is current now.
      send(snapshots.get(projectId, env));
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
