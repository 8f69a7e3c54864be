import { t } from "elysia";
import { BodyObject, Integer } from "../../lib/http";

const PropertyValue = t.Union([t.String({ maxLength: 1000 }), t.Number(), t.Boolean(), t.Null()]);

export const IngestEventSchema = BodyObject({
  name: t.String({
    minLength: 1,
    maxLength: 128,
    description:
      "Letters, digits, _ . : - ; an unknown name becomes a pending catalog row. Or an exposure, `$exposure:<experiment id>` or a guarded rollout's `$exposure:<rollout id>_<stage>` (needs `unitId` and a string `properties.variant`; never a catalog row)",
  }),
  unitId: t.Optional(t.String({ minLength: 1, maxLength: 256, description: "The unit (user, account) it happened to: unique-unit metrics count these" })),
  ts: t.Optional(t.Union([t.Number(), t.String({ maxLength: 40 })], { description: "Epoch milliseconds or ISO 8601; default now. At most a day ahead, at most 396 days old" })),
  value: t.Optional(t.Number({ description: "A number sum metrics add up (amount, duration)" })),
  properties: t.Optional(
    t.Record(t.String(), PropertyValue, {
      maxProperties: 50,
      description: "Scalar properties (filters and sums of metrics); their names join the auto-inferred attributes",
    }),
  ),
});

export const IngestBody = BodyObject(
  {
    events: t.Array(IngestEventSchema, { maxItems: 1000, description: "Up to 1,000 events (at least one, unless the call only carries contexts)" }),
    contexts: t.Optional(
      t.Array(t.Record(t.String(), t.Unknown()), {
        maxItems: 100,
        description: "Evaluation contexts the SDK evaluated locally: their scalar attribute names join the auto-inferred attributes (nothing else is stored)",
      }),
    ),
  },
  {
    examples: [
      {
        events: [
          { name: "checkout.completed", unitId: "user-42", ts: 1795430400000, value: 59.9, properties: { plan: "pro", country: "de" } },
          { name: "page.viewed", unitId: "user-42", properties: { path: "/pricing" } },
        ],
      },
    ],
  },
);

export const IngestReply = t.Object({ accepted: Integer({ description: "Events stored (all of the batch)" }) }, { examples: [{ accepted: 2 }] });
