import { readFileSync } from "node:fs";
import * as Sentry from "@sentry/node";

/**
 * A real @sentry/node client in the test's own process, without touching
 * Sentry's global state (its own client on its own scope), so that a test
 * file can throw in a function of its own and report it: the frames then
 * point at that file and line. Context lines are read by Sentry's own
 * integration, as in an app.
 */
export function sentryClient(dsn: string, options: { release?: string; environment?: string } = {}) {
  const client = new Sentry.NodeClient({
    dsn,
    transport: Sentry.makeNodeTransport,
    stackParser: Sentry.defaultStackParser,
    integrations: [Sentry.contextLinesIntegration()],
    release: options.release,
    environment: options.environment,
  });
  const scope = new Sentry.Scope();
  scope.setClient(client);
  client.init();
  return {
    /** Reports `error` as the app would, with the unit and tags; answers the event id. */
    capture(error: unknown, context: { user?: { id: string }; tags?: Record<string, string> } = {}): string {
      const s = scope.clone();
      if (context.user) s.setUser(context.user);
      if (context.tags) s.setTags(context.tags);
      return s.captureException(error);
    },
    flush: (timeoutMs = 10_000) => client.flush(timeoutMs),
  };
}

/** The 1-based line of `file` holding `marker` (it must occur once): where a test's own function throws. */
export function lineOf(file: string, marker: string): number {
  const lines = readFileSync(file, "utf8").split("\n");
  const at = lines.flatMap((l, i) => (l.includes(marker) ? [i + 1] : []));
  if (at.length !== 1) throw new Error(`${marker} is on ${at.length} lines of ${file}`);
  return at[0]!;
}
