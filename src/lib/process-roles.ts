/**
 * The environment variable that makes the compiled binary start as the config schema checker, a child process of
 * the server (src/modules/configs/schema-checker.ts starts it; src/main.ts reads this before anything else). From
 * source the child runs schema-check-process.ts directly and needs no flag. In lib (not in the configs module)
 * because `svc help` and `svc version` read it too and load no module's code.
 */
export const SCHEMA_CHECKER_ROLE_ENV = "SVC_CONFIG_SCHEMA_CHECKER";
