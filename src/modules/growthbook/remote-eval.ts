/**
 * GrowthBook's remote evaluation (`POST /api/eval/{key}`, the mode its browser and mobile SDKs use with
 * `remoteEval: true`): every feature of the GrowthBook payload, already evaluated for the posted attributes
 * by svc's own evaluator (OFREP's evaluateAll), so nothing GrowthBook cannot express matters here and no
 * rule, salt or other env leaves the server. Pure over the snapshot, for the edge relay as well.
 */
import type { PublishedExperiment } from "../../sdk/experiments";
import { type Exposure, evaluateAll } from "../delivery/ofrep";
import type { Snapshot } from "../delivery/snapshot";
import { type GbRule, dateUpdatedOf } from "./mapping";

/** What GrowthBook SDKs post: their attributes, and what their dev tools force. */
export type RemoteEvalRequest = {
  attributes?: Record<string, unknown>;
  forcedVariations?: Record<string, unknown>;
  forcedFeatures?: unknown[];
  url?: string;
};

type Track = { experiment: Record<string, unknown>; result: Record<string, unknown> };
export type RemoteEvalFeature = { defaultValue: unknown; rules?: (GbRule & { tracks?: Track[] })[] };
export type RemoteEvalPayload = { features: Record<string, RemoteEvalFeature>; experiments: never[]; dateUpdated: string };

/**
 * The evaluated features. A unit an experiment assigns gets its experiment feature as a forced rule with
 * `tracks`, so the SDK's trackingCallback hears the assignment as it would locally; its exposure is in
 * `exposures` (the route logs it as OFREP does). `forcedFeatures` (`[[key, value], …]`) and
 * `forcedVariations` (`{experiment: variation index}`) are applied as GrowthBook's own server does.
 */
export function remoteEvaluate(snapshot: Snapshot, request: RemoteEvalRequest, exposures?: Exposure[]): RemoteEvalPayload {
  const attributes = request.attributes ?? {};
  const experiments = (snapshot.experiments ?? {}) as Record<string, PublishedExperiment>;
  const features: Record<string, RemoteEvalFeature> = {};
  for (const flag of evaluateAll(snapshot, attributes, exposures)) {
    const experiment = Object.hasOwn(experiments, flag.key) ? experiments[flag.key]! : undefined;
    const isExperiment = experiment && !(flag.key in snapshot.killswitches) && !Object.hasOwn(snapshot.gates, flag.key) && !Object.hasOwn(snapshot.configs, flag.key);
    if (!isExperiment || flag.reason !== "SPLIT") {
      features[flag.key] = { defaultValue: flag.value };
      continue;
    }
    const index = experiment.variants.findIndex((v) => v.key === flag.variant);
    const universe = (snapshot.universes as Record<string, { unit_type?: string }>)[experiment.universe];
    const track: Track = {
      experiment: { key: flag.key, name: experiment.id, variations: experiment.variants.map((v) => v.value ?? null), meta: experiment.variants.map((v) => ({ key: v.key, name: v.key })) },
      result: { inExperiment: true, variationId: index, value: flag.value, key: flag.variant, name: flag.variant, hashUsed: true, featureId: flag.key, hashAttribute: universe?.unit_type ?? "user_id", hashValue: exposures?.find((e) => e.experimentId === experiment.id)?.unitId ?? "" },
    };
    features[flag.key] = { defaultValue: flag.value, rules: [{ force: flag.value, tracks: [track] }] };
  }
  for (const [name, variation] of Object.entries(request.forcedVariations ?? {})) {
    const experiment = Object.hasOwn(experiments, name) ? experiments[name] : undefined;
    const variant = experiment && typeof variation === "number" && Number.isInteger(variation) ? experiment.variants[variation] : undefined;
    if (variant && features[name]) features[name] = { defaultValue: variant.value ?? null };
  }
  for (const pair of request.forcedFeatures ?? []) {
    if (Array.isArray(pair) && typeof pair[0] === "string" && Object.hasOwn(features, pair[0])) features[pair[0]] = { defaultValue: pair[1] };
  }
  return { features, experiments: [], dateUpdated: dateUpdatedOf(snapshot) };
}
