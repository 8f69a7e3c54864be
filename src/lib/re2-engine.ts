// re2js as an ES module, for src/lib/re2.ts to require on first use: a require("re2js") itself resolves to re2js's
// CommonJS build, a second copy beside the ES module the SDK's evaluator (src/sdk/util.ts) imports.
export { RE2JS } from "re2js";
