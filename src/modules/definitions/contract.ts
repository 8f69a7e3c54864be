import { t } from "elysia";
import { BodyObject, QueryObject } from "../../lib/http";
import { ENTRIES_MAX, SECTIONS } from "./types";

const EXAMPLE = {
  version: 1,
  segments: [{ name: "beta-testers", description: "Customers in the beta programme", attribute: "user_id", conditions: [], ids: ["u-1001", "u-1002"] }],
  killswitches: [{ name: "payments", description: "Turns card payments off", envs: { prod: { value: true, switches: { eu: true } } } }],
  gates: [{ name: "new-checkout", description: "The redesigned checkout", envs: { prod: { rules: [{ name: "beta", conditions: [{ attr: "user_id", op: "in_segment", value: "beta-testers" }], passPercentage: 100 }] } } }],
  configs: [{ name: "search-limits", description: "", schema: { type: "integer", minimum: 1 }, envs: { prod: { value: 60, rules: [{ name: "pro", conditions: [{ attr: "plan", op: "eq", value: "pro" }], value: 600 }] } } }],
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
});

export const ApplyQuery = QueryObject({
  dryRun: t.Optional(t.String({ description: "true: check everything apply would do, then change nothing (the plan)" })),
  prune: t.Optional(t.String({ description: "true: delete what a section of the document lists no longer (sections it leaves out are kept)" })),
  env: EnvsParam,
});

const FieldChange = t.Object({ field: t.String({ description: "e.g. description, envs.prod.rules" }), before: t.Unknown(), after: t.Unknown() });

export const ApplyResultSchema = t.Object(
  {
    changes: t.Array(
      t.Object({
        section: t.String(),
        name: t.String(),
        action: t.Union([t.Literal("create"), t.Literal("update"), t.Literal("delete")]),
        changes: t.Array(FieldChange),
      }),
    ),
    summary: t.Object({ create: t.Integer(), update: t.Integer(), delete: t.Integer() }),
    applied: t.Boolean({ description: "false for a dry run, or when nothing changes" }),
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
