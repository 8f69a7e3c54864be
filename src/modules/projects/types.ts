/** The projects feature's own types, shared by its service and its store (the store imports no service). */
import type { Env } from "../../lib/envs";

export type AnalysisSettings = {
  method: "frequentist" | "bayesian";
  significanceThreshold: number;
  autoRollback: boolean;
  minSampleDays: number;
};

/** The full project record of the spec, plus the settings DECISIONS.md names. */
export type Project = {
  id: string;
  organisationId: string;
  name: string;
  slug: string;
  domain: string;
  /** Browser origins admitted besides the domain's (full origins, normalised). */
  allowedOrigins: string[];
  ownerEmail: string;
  plan: string;
  status: string;
  subscriptionStatus: string;
  billingInterval: string;
  currentPeriodEnd: string;
  trialEndsAt: string | null;
  cancelAtPeriodEnd: 0 | 1;
  moduleTranslations: boolean;
  moduleConfigs: boolean;
  moduleGates: boolean;
  moduleExperiments: boolean;
  moduleFeedback: boolean;
  publicTicketCreation: boolean;
  defaultEnv: Env;
  timezone: string;
  /** Days raw analytics events are kept (hourly roll-ups: 13 months). */
  eventRetentionDays: number;
  /** Days after which a flag serving one value to everyone, or not evaluated, is listed stale (issue 30). */
  staleAfterDays: number;
  analysis: AnalysisSettings;
  createdAt: string;
  updatedAt: string;
};

export type Organisation = { id: string; name: string; createdAt: string };

export type User = { id: string; email: string; createdAt: string };

/** At most this many origins in a project's `allowedOrigins`. */
export const MAX_ALLOWED_ORIGINS = 20;
