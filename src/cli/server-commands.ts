import { closeSync, existsSync, openSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { type } from "arktype";
import { UsageError } from "../lib/config";
import { vacuumInto } from "../lib/backups";
import { SqliteStore, describeTarget } from "../lib/store";
import { EmailText, parseOrThrow } from "./parse";
import { DATA_FLAG, STORE_FLAG, dataDirOf, openCommandStore, storeTargetOf } from "./store-option";
import { portSetting } from "./port";
import { closeServices, createServices } from "../app";
import type { Command } from "./command";
import { keyToBackUp, writeKeyBackup } from "./backup-key";
import { CliError } from "./errors";


export const initCommand: Command = {
  name: "init",
  summary: "Create an organisation, a project, its owner and one admin, client and server key",
  details: [
    "Works with or without a running server on the same data directory. Each call creates a new organisation (or, with --organisation, a new project in that one). The keys are shown only here, never again.",
  ],
  examples: ["svc init --json", "svc init --project Shop --owner me@example.com --public-tickets --json", "svc init --organisation org_… --project Checkout --json"],
  flags: {
    data: DATA_FLAG,
    store: STORE_FLAG,
    project: { type: "string", value: "NAME", help: 'Name of the new project (default "My project")' },
    organisation: { type: "string", value: "ID", help: "Add the project to this existing organisation (org_…) instead of creating one" },
    owner: { type: "string", value: "EMAIL", help: "Owner of a new organisation (default: SERVICE_ADMIN_EMAIL, else owner@example.com; with --organisation its first owner)" },
    plan: { type: "string", value: "PLAN", help: "pro (default) or free" },
    "public-tickets": { type: "boolean", help: "Let the client key file public tickets (bug reports, feature requests) into the project" },
    json: { type: "boolean", help: "Print {organisationId, projectId, ownerEmail, adminKey, clientKey, serverKey} as one JSON line" },
  },
  async run({ values }) {
    const target = storeTargetOf(values);
    const where = describeTarget(target);
    const projectName = ((values.project as string | undefined) ?? "My project").trim();
    if (projectName === "" || projectName.length > 200) throw new UsageError("--project must be 1-200 characters");
    const organisationId = values.organisation as string | undefined;
    if (organisationId !== undefined && !/^org_[A-Za-z0-9]{1,64}$/.test(organisationId)) throw new UsageError("--organisation must be an organisation id (org_…); `svc whoami` lists yours");
    const ownerFlag = (values.owner as string | undefined) ?? (organisationId ? undefined : process.env.SERVICE_ADMIN_EMAIL ?? "owner@example.com");
    const ownerEmail = ownerFlag === undefined ? undefined : parseOrThrow(EmailText, ownerFlag, "--owner");
    const plan = parseOrThrow(type("'pro' | 'free'"), (values.plan as string | undefined) ?? "pro", "--plan");

    // Works beside running servers: on one WAL file or one PostgreSQL, every write is one locked transaction.
    const store = await openCommandStore(target);
    const services = createServices(store, { maxBodyBytes: 1 << 20, outboxPath: resolve(dataDirOf(values), "outbox.log") });
    try {
      // One transaction: the project never exists without its three keys.
      const { organisation, project, keys } = await store.write(async () => {
        const publicTicketCreation = values["public-tickets"] === true;
        let created: { organisation: { id: string }; project: { id: string; name: string; ownerEmail: string } };
        if (organisationId) {
          // Another project of an existing organisation: its people reach it at once.
          const organisation = await services.projects.organisation(organisationId);
          if (!organisation) throw new CliError(`no organisation ${organisationId} in ${where}`, "NOT_FOUND", "`svc whoami` (signed in) lists your organisations and their projects");
          const owner = ownerEmail ?? (await services.projects.firstOwnerEmail(organisationId)) ?? "owner@example.com";
          created = { organisation, project: await services.projects.createProject(organisationId, { name: projectName, ownerEmail: owner, plan, publicTicketCreation }) };
        } else {
          created = await services.projects.createOrganisationWithProject({ projectName, ownerEmail: ownerEmail!, plan, publicTicketCreation });
        }
        return { ...created, keys: await services.projects.mintStarterKeys(created.project.id) };
      });
      const result = {
        organisationId: organisation.id,
        projectId: project.id,
        ownerEmail: project.ownerEmail,
        adminKey: keys.admin,
        clientKey: keys.client,
        serverKey: keys.server,
      };
      if (values.json) {
        console.log(JSON.stringify(result));
      } else {
        console.log(`Created project "${project.name}" (${project.id}) in organisation ${organisation.id}, owner ${project.ownerEmail}.`);
        console.log(`Data: ${where}`);
        console.log("Keys (shown only now, store them safely):");
        console.log(`  admin   ${keys.admin}`);
        console.log(`  client  ${keys.client}`);
        console.log(`  server  ${keys.server}`);
      }
      return 0;
    } finally {
      await closeServices(services);
      await store.close();
    }
  },
};

export const healthcheckCommand: Command = {
  name: "healthcheck",
  summary: "Exit 0 when the local server answers GET /healthz (for Docker HEALTHCHECK)",
  details: ["Exit status 0 when the server answers 200, else 1."],
  examples: ["svc healthcheck", "svc healthcheck --port 9000"],
  flags: {
    port: { type: "string", value: "PORT", help: "Port of the local server (default: PORT, else 8080)" },
    host: { type: "string", value: "HOST", help: "Host of the server (default 127.0.0.1)" },
    "timeout-ms": { type: "string", value: "MS", help: "Give up after MS milliseconds, 1 to 60000 (default 2000)" },
    json: { type: "boolean", help: "Print {healthy, url, error?} as JSON on stdout" },
  },
  async run({ values }) {
    const port = portSetting(values.port, process.env.PORT);
    const host = (values.host as string | undefined) ?? "127.0.0.1";
    const timeout = values["timeout-ms"] === undefined ? 2000 : parseOrThrow(type("string.integer.parse").to("1 <= number <= 60000"), values["timeout-ms"], "--timeout-ms");
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/healthz`;
    let problem: string;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeout) });
      if (res.ok) {
        console.log(values.json ? JSON.stringify({ healthy: true, url }) : `healthy: ${url}`);
        return 0;
      }
      problem = `answered ${res.status}`;
    } catch (err) {
      problem = (err as Error).message;
    }
    if (values.json) console.log(JSON.stringify({ healthy: false, url, error: problem }));
    else console.error(`unhealthy: ${url}: ${problem}`);
    return 1;
  },
};

export const backupCommand: Command = {
  name: "backup",
  summary: "Write a consistent copy of the SQLite database while the server runs (VACUUM INTO)",
  details: [
    "The copy is a complete SQLite database (mode 0600) holding service.db: projects, keys, killswitches, configs, gates, people, the audit trail. Restore it with `svc restore --from FILE --data NEW_DIR` (integrity check first, into an empty data directory).",
    "Analytics events live apart, in <data>/events.db, and are not in that file: add --events-out FILE to copy them too (restore with `svc restore --events-from`).",
    "Connector credentials are sealed with <data>/secret.key: it is copied beside the backup as FILE.secret.key (mode 0600), and `svc restore` puts it back; without it a restored server could not open them. Anyone holding both files can read those credentials: store them as you would the key. With SERVICE_SECRET_KEY instead of the file, keep that value with your backups.",
    "On PostgreSQL use its own tools: `pg_dump --format=custom --file svc.dump \"$SERVICE_STORE_URL\"` (restore with pg_restore into an empty database), and keep <data>/secret.key (or SERVICE_SECRET_KEY) with the dump.",
  ],
  examples: ["svc backup --out backup-2026-11-21.db", "svc backup --data /var/lib/svc --out /backups/svc.db", "svc backup --out svc.db --events-out svc-events.db"],
  flags: {
    out: { type: "string", value: "FILE", help: "File to write (required; an existing file is never overwritten)" },
    "events-out": { type: "string", value: "FILE", help: "Also copy the analytics events (<data>/events.db) to FILE" },
    data: DATA_FLAG,
    store: STORE_FLAG,
    json: { type: "boolean", help: "Print {out, eventsOut?, secretKey?}, the paths written, as JSON (failures as one JSON object on stderr)" },
  },
  async run({ values }) {
    const out = values.out as string | undefined;
    if (!out) throw new UsageError("--out FILE is required");
    const target = resolve(out);
    const exists = (path: string) => new CliError(`${path} already exists`, "ALREADY_EXISTS", "choose a new file name (backups never overwrite)");
    if (existsSync(target)) throw exists(target);
    const source = storeTargetOf(values);
    if (source.engine === "postgres") {
      throw new CliError("svc backup copies SQLite files; this store is PostgreSQL", "USAGE", `use pg_dump: pg_dump --format=custom --file ${out} "<the --store URL>", and keep the data directory's secret.key (or SERVICE_SECRET_KEY) with it`, 2);
    }
    if (!existsSync(source.path)) throw new CliError(`no database at ${source.path}`, "NOT_FOUND", "pass --data DIR, the directory `svc serve --data` uses");
    const eventsOut = values["events-out"] === undefined ? undefined : resolve(values["events-out"] as string);
    const eventsPath = join(dataDirOf(values), "events.db");
    if (eventsOut !== undefined) {
      if (eventsOut === target) throw new UsageError("--events-out must name another file than --out");
      if (existsSync(eventsOut)) throw exists(eventsOut);
      if (!existsSync(eventsPath)) throw new CliError(`no analytics events at ${eventsPath}`, "NOT_FOUND", "events.db appears once the server has taken events; with SERVICE_ANALYTICS_URL they live in that PostgreSQL (use pg_dump)");
    }
    const key = keyToBackUp(dataDirOf(values), target);
    const store = await openCommandStore(source, { migrate: false });
    try {
      // The copy holds every key hash and session: it is created 0600 before SQLite writes into it.
      (store as SqliteStore).backupTo(target);
    } catch (err) {
      rmSync(target, { force: true });
      if ((err as NodeJS.ErrnoException).code === "EEXIST") throw exists(target);
      throw new CliError(`cannot write ${target}: ${(err as Error).message}`, "ERROR");
    } finally {
      await store.close();
    }
    if (eventsOut !== undefined) {
      try {
        closeSync(openSync(eventsOut, "wx", 0o600));
        await vacuumInto(eventsPath, eventsOut);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") throw exists(eventsOut);
        rmSync(eventsOut, { force: true });
        throw new CliError(`cannot write ${eventsOut}: ${(err as Error).message} (${target} was written)`, "ERROR");
      }
    }
    if (key) {
      try {
        writeKeyBackup(key);
      } catch (err) {
        throw new CliError(`cannot write ${key.to}: ${(err as Error).message} (${target} was written)`, "ERROR");
      }
    }
    if (values.json) console.log(JSON.stringify({ out: target, ...(eventsOut ? { eventsOut } : {}), ...(key ? { secretKey: key.to } : {}) }));
    else {
      console.log(`backup written to ${target}${eventsOut ? `, analytics events to ${eventsOut}` : ""}${key ? `, the secret key to ${key.to} (mode 0600; keep it with the backup)` : ""}`);
      if (!key && process.env.SERVICE_SECRET_KEY) console.log("connector credentials are sealed with SERVICE_SECRET_KEY: keep that value with the backup");
    }
    return 0;
  },
};
