import { t } from "elysia";
import { BodyObject } from "../../lib/http";

export const KeyParam = t.Object({ key: t.String({ minLength: 1, maxLength: 256, description: "A server SDK key (`sdk_server_…`): what GrowthBook SDKs send as their clientKey" }) });

const Rule = t.Record(t.String(), t.Unknown(), {
  description:
    "A GrowthBook feature rule: `{condition?, parentConditions?, filters?, force, range?, seed?, hashAttribute?, hashVersion: 2}` or an experiment rule `{key, name, variations, ranges, meta, seed, hashAttribute, hashVersion: 2, filters}`",
});

export const GrowthbookPayloadSchema = t.Object(
  {
    status: t.Literal(200),
    features: t.Record(t.String(), t.Object({ defaultValue: t.Unknown(), rules: t.Optional(t.Array(Rule)) })),
    experiments: t.Array(t.Unknown()),
    dateUpdated: t.String({ description: "A version stamp derived from the env's revision (not a wall time): it changes with every publish" }),
    savedGroups: t.Optional(
      t.Record(t.String(), t.Array(t.Union([t.String(), t.Number()])), {
        description:
          "GrowthBook saved groups: each segment with an id list that the rules name (`{<attribute>: {$inGroup: <segment name>}}`), by segment name, once; an id that reads as a number is listed as that number too (svc matches a number attribute by its text). Absent when no rule names such a segment",
      }),
    ),
  },
  {
    title: "GrowthbookPayload",
    examples: [
      {
        status: 200,
        features: {
          checkout: { defaultValue: false },
          "checkout/apple-pay": { defaultValue: true },
          "new-nav": {
            defaultValue: false,
            rules: [
              { condition: { country: { $in: ["DE"], $not: { $type: "array" } } }, force: true, range: [0, 0.25], seed: "k3Jx9", hashAttribute: "user_id", hashVersion: 2 },
              { condition: { country: { $in: ["DE"], $not: { $type: "array" } } }, force: false },
            ],
          },
          "early-access": { defaultValue: false, rules: [{ condition: { user_id: { $inGroup: "beta-testers", $not: { $type: "array" } } }, force: true }] },
          "pricing-page": {
            defaultValue: "control",
            rules: [
              {
                key: "pricing-page",
                name: "exp_4Hq2",
                seed: "Zp81",
                hashVersion: 2,
                hashAttribute: "user_id",
                variations: ["control", "annual-first", "monthly-first"],
                ranges: [[0, 0.3334], [0.3334, 0.6667], [0.6667, 1]],
                meta: [{ key: "control", name: "control" }, { key: "annual", name: "annual" }, { key: "monthly", name: "monthly" }],
                filters: [{ attribute: "user_id", seed: "uv9", hashVersion: 2, ranges: [[0, 0.5]] }],
              },
            ],
          },
        },
        experiments: [],
        dateUpdated: "1970-01-01T00:00:42.317Z",
        savedGroups: { "beta-testers": ["u-1842", "u-2231", "1007", 1007] },
      },
    ],
  },
);

export const BrowserKeyParam = t.Object({ key: t.String({ minLength: 1, maxLength: 256, description: "A browser SDK key (`sdk_browser_…`; a server key works too): what GrowthBook SDKs send as their clientKey with `remoteEval: true`" }) });

export const RemoteEvalBody = BodyObject(
  {
    attributes: t.Optional(t.Record(t.String(), t.Unknown(), { description: "The user's attributes (`user_id`, `account_id`, and what the rules read); at most 64 KiB of JSON" })),
    forcedVariations: t.Optional(t.Record(t.String(), t.Unknown(), { description: "Experiment name to variation index, from the SDK's dev tools" })),
    forcedFeatures: t.Optional(t.Array(t.Unknown(), { description: "`[[featureKey, value], …]`, from the SDK's dev tools" })),
    url: t.Optional(t.String({ maxLength: 4096 })),
  },
  { examples: [{ attributes: { user_id: "u-42", country: "DE", app_version: "2.4.1" }, forcedVariations: {}, forcedFeatures: [], url: "https://app.example.com/pricing" }] },
);

export const RemoteEvalSchema = t.Object(
  {
    features: t.Record(t.String(), t.Object({ defaultValue: t.Unknown(), rules: t.Optional(t.Array(t.Record(t.String(), t.Unknown()))) })),
    experiments: t.Array(t.Unknown()),
    dateUpdated: t.String(),
  },
  {
    title: "GrowthbookRemoteEval",
    examples: [
      {
        features: {
          checkout: { defaultValue: false },
          "new-nav": { defaultValue: true },
          "pricing-page": {
            defaultValue: "annual-first",
            rules: [
              {
                force: "annual-first",
                tracks: [
                  {
                    experiment: { key: "pricing-page", name: "exp_4Hq2", variations: ["control", "annual-first", "monthly-first"] },
                    result: { inExperiment: true, variationId: 1, value: "annual-first", key: "annual", hashAttribute: "user_id", hashValue: "u-42" },
                  },
                ],
              },
            ],
          },
        },
        experiments: [],
        dateUpdated: "1970-01-01T00:00:42.317Z",
      },
    ],
  },
);
