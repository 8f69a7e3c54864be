import type { Env } from "../../lib/envs";
import type { Snapshot } from "../delivery/snapshot";
import { EvaluationCounter } from "./counter";

/** Per snapshot: every flag name it can answer (bulk evaluation answers them all), made once. */
const namesOf = new WeakMap<Snapshot, string[]>();

function allNames(snapshot: Snapshot): string[] {
  let names = namesOf.get(snapshot);
  if (!names) {
    const set = new Set<string>([...Object.keys(snapshot.killswitches), ...Object.keys(snapshot.gates), ...Object.keys(snapshot.configs), ...Object.keys(snapshot.experiments ?? {})]);
    namesOf.set(snapshot, (names = [...set]));
  }
  return names;
}

/** The flag an evaluated key belongs to: the key itself, or the killswitch of a sub-switch key `name/switchKey`. */
export function flagNameOf(snapshot: Snapshot, key: string): string | undefined {
  if (Object.hasOwn(snapshot.killswitches, key) || Object.hasOwn(snapshot.gates, key) || Object.hasOwn(snapshot.configs, key) || Object.hasOwn(snapshot.experiments ?? {}, key)) return key;
  for (let slash = key.indexOf("/"); slash !== -1; slash = key.indexOf("/", slash + 1)) {
    const parent = key.slice(0, slash);
    if (Object.hasOwn(snapshot.killswitches, parent)) return parent;
  }
  return undefined;
}

/**
 * What the evaluating routes (OFREP, GrowthBook remote evaluation, on the server and on an edge relay) call
 * after answering: counts in memory only (see EvaluationCounter); whoever owns the counter writes them.
 */
export class EvaluationRecorder {
  readonly counter: EvaluationCounter;

  constructor(now: () => number = Date.now) {
    this.counter = new EvaluationCounter(now);
  }

  /** One evaluated key (a sub-switch counts for its killswitch); a key the snapshot does not have is not counted. */
  countKey(projectId: string, env: Env, snapshot: Snapshot, key: string): void {
    const name = flagNameOf(snapshot, key);
    if (name !== undefined) this.counter.add(projectId, env, name);
  }

  /** A bulk evaluation: every flag of the snapshot once. */
  countAll(projectId: string, env: Env, snapshot: Snapshot): void {
    this.counter.add(projectId, env, allNames(snapshot));
  }
}
