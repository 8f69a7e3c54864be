/** The killswitches feature's own types, shared by its service and its store (the store imports no service). */
import type { Env } from "../../lib/envs";

/** Who made a change, as recorded on every published version. */
export type Actor = { email: string; type: string };

export type Switches = Record<string, boolean>;

/** What SDKs see for one killswitch on one env. */
export type Published = { value: boolean; switches: Switches };

export type KillswitchEnvState = Published & { version: number; updatedAt: string; updatedBy: string };

export type Killswitch = {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
  updatedAt: string;
  envs: Record<Env, KillswitchEnvState>;
};
