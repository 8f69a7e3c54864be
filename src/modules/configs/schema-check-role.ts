/**
 * The environment variable that makes the compiled binary start as the config schema checker's child process
 * (schema-checker.ts starts it; src/main.ts reads it before anything else). From source the child runs
 * schema-check-process.ts directly and needs no flag.
 */
export const SCHEMA_CHECKER_ROLE_ENV = "SVC_CONFIG_SCHEMA_CHECKER";
