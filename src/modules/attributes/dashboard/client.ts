import { apiOf } from "../../../web/dashboard/api";
import type { attributeRoutes } from "../routes";

export const attributeApi = apiOf<ReturnType<typeof attributeRoutes>>();

export type Attribute = NonNullable<Awaited<ReturnType<typeof attributeApi.api.admin.attributes.get>>["data"]>[number];
/** The types an attribute is declared with (the server's ATTRIBUTE_TYPES; the page does not import server code). */
export const ATTRIBUTE_TYPES = ["string", "number", "boolean", "enum", "semver", "date"] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** What a select says for each type. */
export const TYPE_LABELS: Record<AttributeType, string> = {
  string: "string: text",
  number: "number",
  boolean: "boolean: true or false",
  enum: "enum: one of listed values",
  semver: "semver: a version, e.g. 2.4.0",
  date: "date: an ISO date",
};

/** "free, pro , enterprise" → ["free", "pro", "enterprise"] (blanks dropped). */
export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
}


export { errorsByField } from "../../../web/dashboard/ui";
