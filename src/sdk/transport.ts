// The snapshot feed: one poll, then the event stream (Last-Event-ID, backoff) with If-None-Match polls as a safety net.

import { unref } from "./util";

const DEFAULT_POLL_MS = 30_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;

type Waiter<E> = { resolve: () => void; reject: (error: E) => void };

/** What the feed reads of a snapshot to order them (the client's Snapshot has these and more). */
export type SnapshotHead = { projectId: string; env: string; epoch: string; revision: number };

/** One Server-Sent Event, as index.ts's readEventStream dispatches it. */
type StreamEvent = { event: string; data: string; id: string };

/** The error class and the stream reader are index.ts's exports: they come in here, so that nothing imports index.ts back. */
export type SnapshotFeedOptions<E> = {
  fetchImpl: (url: string, init?: RequestInit) => Promise<Response>;
  baseUrl: string;
  /** `?env=...` or "". */
  query: string;
  headers: (extra?: Record<string, string>) => Record<string, string>;
  pollIntervalMs?: number;
  streaming: boolean;
  report: (error: E) => void;
  readEventStream: (body: ReadableStream<Uint8Array>, onEvent: (event: StreamEvent) => void) => Promise<void>;
  httpError: (response: Response, what: string) => Promise<E>;
  asError: (error: unknown, what: string) => E;
  closedError: () => E;
};

export function createSnapshotFeed<S extends SnapshotHead, E>(options: SnapshotFeedOptions<E>) {
  const { fetchImpl, baseUrl, query, headers, streaming, report, readEventStream, httpError, closedError } = options;
  const asSvcError = options.asError;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;

  let current: S | null = null;
  let etag: string | null = null;
  /** The stream event id that delivered `current`, to send back as Last-Event-ID; null when a poll delivered it. */
  let currentEventId: string | null = null;
  let closed = false;
  let waiters: Waiter<E>[] = [];
  const listeners = new Set<(snapshot: Readonly<S>) => void>();
  const streamAbort = new AbortController();
  let wakeUp: (() => void) | null = null;
  let pollTimer: ReturnType<typeof setInterval> | undefined;

  /** Whether `next` may replace the snapshot in use: never an older or the same revision of the same epoch. */
  const isNewer = (next: S): boolean => {
    if (!current) return true;
    // Another env or project (the project's default env changed) numbers its revisions on its own.
    if (next.env !== current.env || next.projectId !== current.projectId) return true;
    if (next.epoch !== current.epoch) return true;
    return next.revision > current.revision;
  };

  /** `tag`: the ETag of a poll's answer (if it had one); `eventId`: the id of the stream event that carried it. */
  const apply = (received: S, source: { tag: string | null } | { eventId: string }) => {
    const snapshot: S = { ...received, epoch: typeof received.epoch === "string" ? received.epoch : "" };
    if (!isNewer(snapshot)) {
      // The same snapshot again: keep the server's own names for it. An older one changes nothing.
      if (current && snapshot.epoch === current.epoch && snapshot.revision === current.revision) {
        if ("tag" in source) etag = source.tag ?? etag;
        else currentEventId = source.eventId || currentEventId;
      }
      return;
    }
    // The server's tag names (epoch, project, env, revision); when the stream delivered the snapshot, rebuild it the same way.
    etag = "tag" in source && source.tag ? source.tag : `"${snapshot.epoch ? `${snapshot.epoch}-` : ""}${snapshot.projectId}-${snapshot.env}-${snapshot.revision}"`;
    currentEventId = "eventId" in source && source.eventId ? source.eventId : null;
    current = snapshot;
    const pending = waiters;
    waiters = [];
    for (const w of pending) w.resolve();
    for (const listener of listeners) {
      try {
        listener(snapshot);
      } catch (error) {
        report(asSvcError(error, "onChange listener failed"));
      }
    }
  };

  const fail = (error: E) => {
    if (closed) return;
    report(error);
    if (current) return;
    const pending = waiters;
    waiters = [];
    for (const w of pending) w.reject(error);
  };

  const poll = async () => {
    try {
      const response = await fetchImpl(`${baseUrl}/api/sdk/v1/snapshot${query}`, {
        headers: headers(etag ? { "if-none-match": etag } : {}),
      });
      if (response.status === 304) return;
      if (!response.ok) throw await httpError(response, "snapshot request failed");
      apply((await response.json()) as S, { tag: response.headers.get("etag") });
    } catch (error) {
      fail(asSvcError(error, "snapshot request failed"));
    }
  };

  /** Waits, unless close() comes first. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      unref(timer);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const follow = async () => {
    let attempt = 0;
    while (!closed) {
      try {
        const response = await fetchImpl(`${baseUrl}/api/sdk/v1/stream${query}`, {
          // The id of the event that brought the snapshot in use, else (a poll brought it) its revision.
          headers: headers({ accept: "text/event-stream", ...(current ? { "last-event-id": currentEventId ?? String(current.revision) } : {}) }),
          signal: streamAbort.signal,
        });
        if (!response.ok || !response.body) throw await httpError(response, "stream request failed");
        attempt = 0;
        await readEventStream(response.body, (event) => {
          if (event.event === "snapshot") apply(JSON.parse(event.data) as S, { eventId: event.id });
        });
      } catch (error) {
        fail(asSvcError(error, "stream failed"));
      }
      if (closed) return;
      // Exponential backoff with jitter, so that a restarted server is not hit by every client at once.
      const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** attempt++);
      await sleep(ceiling / 2 + Math.random() * (ceiling / 2));
    }
  };

  return {
    /** The snapshot in use, or null before the first one. */
    current: (): S | null => current,
    /** Starts polling, and streaming after the first poll. */
    start() {
      pollTimer = setInterval(() => void poll(), pollIntervalMs);
      unref(pollTimer);
      void poll().then(() => {
        if (streaming && !closed) void follow();
      });
    },
    ready(): Promise<void> {
      if (current) return Promise.resolve();
      if (closed) return Promise.reject(closedError());
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    onChange(listener: (snapshot: Readonly<S>) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Stops polling and streaming; false when it was already closed. */
    close(): boolean {
      if (closed) return false;
      closed = true;
      clearInterval(pollTimer);
      streamAbort.abort();
      wakeUp?.();
      const pending = waiters;
      waiters = [];
      for (const w of pending) w.reject(closedError());
      return true;
    },
  };
}
