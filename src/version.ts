import pkg from "../package.json";

/** The release version, taken from package.json at build time. */
export const VERSION: string = pkg.version;
