import { t } from "elysia";

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
      },
    ],
  },
);
