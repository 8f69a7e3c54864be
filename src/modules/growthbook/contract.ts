import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";

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

export const GrowthbookStatusQuery = QueryObject({
  env: t.Optional(t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")], { description: "Defaults to the project's `defaultEnv`" })),
});

export const GrowthbookStatusSchema = t.Object(
  {
    env: t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]),
    revision: Integer({ description: "The env's published revision the payload was mapped from (0 before the first publish)" }),
    etag: t.String({ description: "The payload's strong ETag, as `GET /api/features/{key}` sends it" }),
    features: Integer({ description: "Features in the payload: killswitches (and each sub-switch as `name/switchKey`), configs, gates and running experiments" }),
    savedGroups: Integer({ description: "Saved groups in the payload: segments with an id list that the rules name" }),
    payloadBytes: Integer({ description: "The payload's size in bytes, uncompressed" }),
    unmapped: t.Array(
      t.Object({
        feature: t.String({ description: "The feature's key in the payload" }),
        construct: t.String({ description: "What GrowthBook's SDKs cannot evaluate as svc does" }),
        served: t.String({ description: "What the payload serves instead" }),
      }),
      { description: "Constructs the mapping could not express, each with what GrowthBook's SDKs get instead; empty when everything maps" },
    ),
    paths: t.Object({
      features: t.Literal("/api/features/{key}", { description: "What GrowthBook's SDKs load (`apiHost` = this server, `clientKey` = a server SDK key)" }),
      stream: t.Literal("/sub/{key}", { description: "The Server-Sent Events stream they follow" }),
    }),
  },
  {
    title: "GrowthbookStatus",
    examples: [
      {
        env: "prod",
        revision: 42,
        etag: '"m1x9-prj_8Hq2-prod-42-gb"',
        features: 14,
        savedGroups: 1,
        payloadBytes: 6210,
        unmapped: [
          { feature: "unicode-names", construct: "regex /^\\pL+$/ uses RE2-only syntax", served: "false to every unit (the gate is off)" },
          { feature: "price", construct: "experiment annual-push overriding it from a second universe", served: "price without annual-push's override" },
        ],
        paths: { features: "/api/features/{key}", stream: "/sub/{key}" },
      },
    ],
  },
);
