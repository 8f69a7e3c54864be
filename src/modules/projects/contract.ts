import { t } from "elysia";
import { BodyObject, Integer } from "../../lib/http";

/** `dev | staging | prod`, shared by every module that takes an env. */
export const EnvSchema = t.Union([t.Literal("dev"), t.Literal("staging"), t.Literal("prod")]);

export const AnalysisSchema = t.Object({
  method: t.Union([t.Literal("frequentist"), t.Literal("bayesian")]),
  significanceThreshold: t.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
  autoRollback: t.Boolean(),
  minSampleDays: Integer({ minimum: 0, maximum: 365 }),
});

export const ProjectSchema = t.Object({
  id: t.String({ format: "uuid" }),
  organisationId: t.String(),
  name: t.String(),
  slug: t.String(),
  domain: t.String(),
  allowedOrigins: t.Array(t.String(), { description: "Browser origins admitted besides the domain's (CORS and the keys' origin check)" }),
  ownerEmail: t.String(),
  plan: t.String(),
  status: t.String(),
  subscriptionStatus: t.String(),
  billingInterval: t.String(),
  currentPeriodEnd: t.String(),
  trialEndsAt: t.Union([t.String(), t.Null()]),
  cancelAtPeriodEnd: t.Union([t.Literal(0), t.Literal(1)]),
  moduleTranslations: t.Boolean(),
  moduleConfigs: t.Boolean(),
  moduleGates: t.Boolean(),
  moduleExperiments: t.Boolean(),
  moduleFeedback: t.Boolean(),
  publicTicketCreation: t.Boolean(),
  defaultEnv: EnvSchema,
  timezone: t.String(),
  eventRetentionDays: Integer({ description: "Days raw analytics events are kept (default 30); hourly roll-ups are kept 13 months" }),
  staleAfterDays: Integer({ description: "A flag is listed stale after serving one value to everyone, or not being evaluated, for this many days (default 30)" }),
  analysis: AnalysisSchema,
  createdAt: t.String(),
  updatedAt: t.String(),
}, { title: "Project" });

export const ProjectPatchSchema = BodyObject(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    domain: t.Optional(t.String({ maxLength: 253, description: "Host (example.com) or origin (https://app.example.com); empty clears. Stamped into every live SDK key as its allowed origin." })),
    allowedOrigins: t.Optional(
      t.Array(t.String({ maxLength: 253 }), {
        maxItems: 20,
        description:
          "Browser origins admitted besides the domain's, e.g. a staging site or a local dev server: full origins (`https://app.example.com`, `http://localhost:5173`), at most 20; the list replaces the previous one. " +
          "Stamped into every live SDK key with the domain's origin: a browser (`Origin` header) may call the SDK paths from these origins only, and CORS preflights are approved for them.",
      }),
    ),
    slug: t.Optional(t.String({ minLength: 1, maxLength: 63 })),
    defaultEnv: t.Optional(EnvSchema),
    timezone: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    eventRetentionDays: t.Optional(Integer({ minimum: 1, maximum: 365, description: "Days raw analytics events are kept (default 30)" })),
    staleAfterDays: t.Optional(Integer({ minimum: 1, maximum: 365, description: "Days after which a flag that served one value to everyone, or was not evaluated, is listed stale (default 30; GET /api/admin/flags/stale)" })),
    // minProperties: Elysia turns any value (null, 5, "x") sent for an all-optional object into `{}`; this refuses them.
    analysis: t.Optional(t.Partial(AnalysisSchema, { minProperties: 1, additionalProperties: false, description: "Any of the analysis settings; the others keep their values." })),
    moduleTranslations: t.Optional(t.Boolean()),
    moduleConfigs: t.Optional(t.Boolean()),
    moduleGates: t.Optional(t.Boolean()),
    moduleExperiments: t.Optional(t.Boolean()),
    moduleFeedback: t.Optional(t.Boolean()),
    publicTicketCreation: t.Optional(t.Boolean()),
  },
  {
    examples: [
      { name: "Checkout service", domain: "https://shop.example.com", allowedOrigins: ["https://staging.shop.example.com", "http://localhost:5173"], defaultEnv: "prod", timezone: "Europe/Berlin", analysis: { significanceThreshold: 0.05 } },
    ],
  },
);

export const CreateProjectBody = BodyObject(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    organisationId: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "Default: the organisation of the selected project (X-Project-Id, else the one bound at login)" })),
    plan: t.Optional(t.Union([t.Literal("pro"), t.Literal("free")], { description: "Default pro" })),
    publicTicketCreation: t.Optional(t.Boolean({ description: "Default false" })),
  },
  { examples: [{ name: "Checkout service", plan: "pro" }] },
);
