/** The environments every project has (SPEC.md). */
export const ENVS = ["dev", "staging", "prod"] as const;
export type Env = (typeof ENVS)[number];

export function isEnv(value: unknown): value is Env {
  return typeof value === "string" && (ENVS as readonly string[]).includes(value);
}
