import type * as NodeCrypto from "node:crypto";

let loaded: typeof NodeCrypto | undefined;

/**
 * node:crypto, loaded on first use. The compiled binary is one bundle whose static imports of Node built-ins
 * are all loaded before anything runs, whichever command starts; this one costs milliseconds of every start
 * (`svc serve`'s included), while only sign-in, connectors and a few CLI commands use it.
 */
export function nodeCrypto(): typeof NodeCrypto {
  loaded ??= require("node:crypto") as typeof NodeCrypto;
  return loaded;
}
