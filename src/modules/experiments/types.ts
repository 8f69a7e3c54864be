/** The experiments feature's own types, shared by its service, store, analysis and guardrails. */
import type { Env } from "../../lib/envs";
import type { SegmentRange } from "../universes/service";
import type { Guardrail, Variant } from "./checks";

export type Actor = { email: string; type: string };

export type ExperimentStatus = "draft" | "running" | "stopped";

export const STATUSES: readonly ExperimentStatus[] = ["draft", "running", "stopped"];

export type Outcome = {
  decision: "ship" | "rollback";
  /** The variant shipped (ship), else null. */
  variant: string | null;
  reason: string | null;
  /** Who stopped it: a person's email, or `system` for an automatic rollback. */
  by: string;
  /** Stopped by the guardrail check (auto-rollback), not by a person. */
  auto: boolean;
};

export type Experiment = {
  id: string;
  name: string;
  description: string | null;
  /** The universe's name, and its id. */
  universe: string;
  universeId: string;
  env: Env;
  status: ExperimentStatus;
  variants: Variant[];
  allocation: SegmentRange;
  gate: string | null;
  primaryMetric: string | null;
  guardrailMetrics: Guardrail[];
  salt: string;
  startedAt: string | null;
  stoppedAt: string | null;
  outcome: Outcome | null;
  createdAt: string;
  updatedAt: string;
};
