import type { Env } from "../../lib/envs";
import type { ServiceContext } from "../../lib/module";
import { growthbookEntry } from "./prepared";

/** What `GET /api/admin/growthbook` answers (contract.ts GrowthbookStatusSchema). */
export type GrowthbookStatus = {
  env: Env;
  revision: number;
  etag: string;
  features: number;
  savedGroups: number;
  payloadBytes: number;
  unmapped: { feature: string; construct: string; served: string }[];
  paths: { features: "/api/features/{key}"; stream: "/sub/{key}" };
};

/**
 * What GrowthBook's SDKs get on an env, for the admin surfaces (route, CLI, MCP, dashboard): read from the
 * published snapshot entry through the same cached mapping the SDK paths serve, so it never disagrees with them.
 */
export class GrowthbookService {
  constructor(private readonly ctx: ServiceContext) {}

  async status(projectId: string, env?: Env): Promise<GrowthbookStatus> {
    const { snapshots } = this.ctx.services;
    const entry = await snapshots.get(projectId, env ?? (await snapshots.defaultEnv(projectId)));
    const gb = growthbookEntry(entry);
    return {
      env: entry.snapshot.env,
      revision: entry.snapshot.revision,
      etag: gb.etag,
      features: gb.counts.features,
      savedGroups: gb.counts.savedGroups,
      payloadBytes: gb.counts.bytes,
      unmapped: gb.unmapped.map(({ feature, construct, served }) => ({ feature, construct, served })),
      paths: { features: "/api/features/{key}", stream: "/sub/{key}" },
    };
  }
}
