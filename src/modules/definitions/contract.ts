import { t } from "elysia";
import { BodyObject, Integer, QueryObject } from "../../lib/http";
import { ChangeRequestSchema } from "../requests/contract";
import { ENVS } from "../../lib/envs";
import { TOOLS } from "./importers/common";
import { ENTRIES_MAX, SECTIONS } from "./types";

const EXAMPLE = {
  version: 1,
  segments: [{ name: "beta-testers", description: "Customers in the beta programme", attribute: "user_id", conditions: [], ids: ["u-1001", "u-1002"] }],
  killswitches: [{ name: "payments", description: "Turns card payments off", envs: { prod: { value: true, switches: { eu: true } } } }],
  gates: [{ name: "new-checkout", description: "The redesigned checkout", envs: { prod: { rules: [{ name: "beta", conditions: [{ attr: "user_id", op: "in_segment", value: "beta-testers" }], passPercentage: 100 }] } } }],
  configs: [{ name: "search-limits", description: "", schema: { type: "integer", minimum: 1 }, envs: { prod: { value: 60, rules: [{ name: "pro", conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: 600 }] } } }],
};

/** A trimmed Unleash feature export (POST /api/admin/features-batch/export), as the import route takes it. */
const UNLEASH_EXAMPLE = {
  features: [{ name: "new-checkout", description: "The redesigned checkout", type: "release", project: "default" }],
  featureStrategies: [
    {
      featureName: "new-checkout",
      environment: "production",
      name: "flexibleRollout",
      parameters: { rollout: "25", stickiness: "default", groupId: "new-checkout" },
      constraints: [{ contextName: "country", operator: "IN", values: ["DE", "FR"] }],
    },
    { featureName: "new-checkout", environment: "production", name: "remoteAddress", parameters: { IPs: "10.0.0.1" }, constraints: [] },
  ],
  featureEnvironments: [{ featureName: "new-checkout", environment: "production", enabled: true }],
  segments: [],
};

const section = (name: string) =>
  t.Optional(t.Array(t.Record(t.String(), t.Unknown()), { maxItems: ENTRIES_MAX, description: `The project's ${name}, by name (checked entry by entry; the detail names \`${name}[i].field\`)` }));

// Spelled out (not mapped from SECTIONS) so that typed clients see each section.
const Sections = {
  attributes: section("attributes"),
  segments: section("segments"),
  templates: section("templates"),
  killswitches: section("killswitches"),
  gates: section("gates"),
  configs: section("configs"),
  universes: section("universes"),
  events: section("events"),
  metrics: section("metrics"),
  alerts: section("alerts"),
  experiments: section("experiments"),
};

export const DefinitionsDocumentSchema = t.Object(
  { version: t.Number({ description: "1: the version `svc export` writes" }), ...Sections },
  { title: "DefinitionsDocument", additionalProperties: false, examples: [EXAMPLE] },
);

export const ApplyBody = BodyObject({ version: t.Number({ description: "1" }), ...Sections }, { examples: [EXAMPLE] });

const EnvsParam = t.Optional(t.String({ maxLength: 40, description: "Comma-separated envs (dev, staging, prod); default all three" }));

export const ExportQuery = QueryObject({
  env: EnvsParam,
  only: t.Optional(t.String({ maxLength: 200, description: `Comma-separated sections: ${SECTIONS.join(", ")}` })),
  format: t.Optional(t.Union([t.Literal("json"), t.Literal("yaml")], { description: "json (default) or yaml: the text `svc export` writes" })),
});

export const ApplyQuery = QueryObject({
  dryRun: t.Optional(t.String({ description: "true: check everything apply would do, then change nothing (the plan)" })),
  prune: t.Optional(t.String({ description: "true: delete what a section of the document lists no longer (sections it leaves out are kept)" })),
  env: EnvsParam,
  title: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "When an env requires approval: the change request's title (default `svc apply: <summary>`)" })),
  reason: t.Optional(t.String({ maxLength: 2000, description: "When an env requires approval: why (the change request's reason)" })),
});

const EnvsText = t.String({ maxLength: 40, pattern: "^(dev|staging|prod)(,(dev|staging|prod))*$", description: "Comma-separated envs (dev, staging, prod), as apply's `env`; default all three" });
const SummaryFields = { create: Integer({ minimum: 0 }), update: Integer({ minimum: 0 }), delete: Integer({ minimum: 0 }) };

/** `definitions.apply`: a whole definitions document applied as one change (what apply opens when an env requires approval). */
export const DefinitionsApplyChange = BodyObject(
  {
    document: ApplyBody,
    prune: t.Optional(t.Boolean({ description: "Also delete what a section lists no longer" })),
    env: t.Optional(EnvsText),
    summary: t.Optional(BodyObject(SummaryFields, { description: "The plan's counts when it was opened (checked against the plan then)" })),
  },
  { examples: [{ document: { version: 1, configs: EXAMPLE.configs }, env: "prod" }] },
);

const FieldChange = t.Object({ field: t.String({ description: "e.g. description, envs.prod.rules" }), before: t.Unknown(), after: t.Unknown() });

const PlanFields = {
  changes: t.Array(
    t.Object({
      section: t.String(),
      name: t.String(),
      action: t.Union([t.Literal("create"), t.Literal("update"), t.Literal("delete")]),
      changes: t.Array(FieldChange),
    }),
  ),
  summary: t.Object({ create: Integer(), update: Integer(), delete: Integer() }),
};

const EXAMPLE_PLAN = {
  changes: [{ section: "configs", name: "search-limits", action: "update", changes: [{ field: "envs.prod.value", before: 60, after: 90 }] }],
  summary: { create: 0, update: 1, delete: 0 },
};

export const ApplyResultSchema = t.Object(
  {
    ...PlanFields,
    applied: t.Boolean({ description: "false for a dry run, or when nothing changes" }),
    approvalRequired: t.Optional(t.Boolean({ description: "Dry run only, present when true: an env the plan publishes on requires approval, so applying opens a change request (202)" })),
  },
  {
    title: "ApplyResult",
    examples: [
      {
        changes: [
          { section: "segments", name: "beta-testers", action: "create", changes: [{ field: "ids", before: null, after: ["u-1001", "u-1002"] }] },
          { section: "configs", name: "search-limits", action: "update", changes: [{ field: "envs.prod.rules", before: [], after: [{ name: "pro", conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: 600 }] }] },
        ],
        summary: { create: 1, update: 1, delete: 0 },
        applied: true,
      },
    ],
  },
);

export const ApplyProposedSchema = t.Object(
  {
    request: ChangeRequestSchema,
    plan: t.Object(PlanFields, { description: "What applying the request will change (as a dry run shows it now)" }),
  },
  {
    title: "ApplyProposed",
    examples: [
      {
        request: {
          id: "cr_4Vb9Qe2LmT7xKc1nR8sD",
          title: "svc apply: 0 created, 1 changed, 0 deleted",
          reason: "Holiday traffic",
          state: "open",
          author: "ana@example.com",
          approvalsRequired: 1,
          approvals: [],
          decidedBy: null,
          note: null,
          createdAt: "2026-11-28T20:00:00.000Z",
          updatedAt: "2026-11-28T20:00:00.000Z",
          changes: [
            {
              position: 1,
              change: { kind: "definitions.apply", document: { version: 1, configs: [{ name: "search-limits", description: "", schema: { type: "integer", minimum: 1 }, envs: { prod: { value: 90, rules: [] } } }] }, summary: { create: 0, update: 1, delete: 0 } },
              kind: "definitions.apply",
              target: { type: "project", name: "definitions" },
              env: null,
              summary: "apply definitions: 0 created, 1 changed, 0 deleted",
              fingerprint: "definitions 3f9a1c07be42",
            },
          ],
        },
        plan: EXAMPLE_PLAN,
      },
    ],
  },
);

export const ImportParams = t.Object({
  tool: t.Union(
    TOOLS.map((tool) => t.Literal(tool)),
    { description: `The tool whose export the body is: ${TOOLS.join(", ")}` },
  ),
});

export const ImportQuery = QueryObject({
  env: t.Optional(t.Union(ENVS.map((env) => t.Literal(env)), { description: "The svc env an export of one environment goes to (GrowthBook's payload, Flagsmith's document); default prod" })),
  envMap: t.Optional(t.String({ maxLength: 400, pattern: "^[^=,]+=(dev|staging|prod)(,[^=,]+=(dev|staging|prod))*$", description: "Source environments to svc envs, e.g. qa=staging,live=prod (development, staging and production map by name)" })),
  keepExact: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "true: keep only 0 % and 100 % rules; partial percentages and splits are listed in `unmapped`" })),
});

/** Another tool's export: any JSON object (its importer says what of it maps). */
export const ImportBody = t.Record(t.String(), t.Unknown(), { description: "The tool's export, as it wrote it (JSON)", examples: [UNLEASH_EXAMPLE] });

export const ImportResultSchema = t.Object(
  {
    document: DefinitionsDocumentSchema,
    unmapped: t.Array(t.Object({ source: t.String({ description: "Where in the export" }), construct: t.String({ description: "What it is (strategy, constraint, environment…)" }), reason: t.String() }), {
      description: "What the document leaves out, and why",
    }),
    rebucketed: t.Array(
      t.Object({ flag: t.String(), env: t.String(), percentage: t.Number(), split: t.Optional(t.Array(t.Number())) }),
      { description: "Percentages kept in the document whose units land in other buckets than in the tool (svc hashes differently); keepExact=true leaves them out" },
    ),
  },
  {
    title: "ImportResult",
    examples: [
      {
        document: {
          version: 1,
          gates: [{ name: "new-checkout", description: "The redesigned checkout", envs: { prod: { rules: [{ conditions: [{ attr: "country", op: "in", value: ["DE", "FR"] }], passPercentage: 25 }] } } }],
        },
        unmapped: [
          {
            source: "feature new-checkout (production) strategy 2 remoteAddress",
            construct: "strategy",
            reason: "strategy remoteAddress has no svc equivalent (svc maps default, flexibleRollout, gradualRollout* and userWithId)",
          },
        ],
        rebucketed: [{ flag: "new-checkout", env: "prod", percentage: 25 }],
      },
    ],
  },
);
