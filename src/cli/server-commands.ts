import { closeSync, existsSync, openSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { type } from "arktype";
import {
  DEFAULT_DATA_DIR,
  UsageError,
  databasePath,
} from "../lib/config";
import { immediate, openDatabase } from "../lib/db";
import { EmailText, parseOrThrow } from "./parse";
import { portSetting } from "./port";
import { closeServices, createServices } from "../app";
import { VERSION } from "../version";
import type { Command } from "./command";
import { CliError } from "./errors";


export const initCommand: Command = {
  name: "init",
  summary: "Create an organisation, a project, its owner and one admin, client and server key",
  details: [
    "Works with or without a running server on the same data directory. Each call creates a new organisation (or, with --organisation, a new project in that one). The keys are shown only here, never again.",
  ],
  examples: ["svc init --json", "svc init --project Shop --owner me@example.com --public-tickets --json", "svc init --organisation org_… --project Checkout --json"],
  flags: {
    data: { type: "string", value: "DIR", help: "Directory of the database (default: SERVICE_DATA_DIR, else ./data)" },
    project: { type: "string", value: "NAME", help: 'Name of the new project (default "My project")' },
    organisation: { type: "string", value: "ID", help: "Add the project to this existing organisation (org_…) instead of creating one" },
    owner: { type: "string", value: "EMAIL", help: "Owner of a new organisation (default: SERVICE_ADMIN_EMAIL, else owner@example.com; with --organisation its first owner)" },
    plan: { type: "string", value: "PLAN", help: "pro (default) or free" },
    "public-tickets": { type: "boolean", help: "Let the client key file public tickets (bug reports, feature requests) into the project" },
    json: { type: "boolean", help: "Print {organisationId, projectId, ownerEmail, adminKey, clientKey, serverKey} as one JSON line" },
  },
  run({ values }) {
    const dataDir = resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
    const projectName = ((values.project as string | undefined) ?? "My project").trim();
    if (projectName === "" || projectName.length > 200) throw new UsageError("--project must be 1-200 characters");
    const organisationId = values.organisation as string | undefined;
    if (organisationId !== undefined && !/^org_[A-Za-z0-9]{1,64}$/.test(organisationId)) throw new UsageError("--organisation must be an organisation id (org_…); `svc whoami` lists yours");
    const ownerFlag = (values.owner as string | undefined) ?? (organisationId ? undefined : process.env.SERVICE_ADMIN_EMAIL ?? "owner@example.com");
    const ownerEmail = ownerFlag === undefined ? undefined : parseOrThrow(EmailText, ownerFlag, "--owner");
    const plan = parseOrThrow(type("'pro' | 'free'"), (values.plan as string | undefined) ?? "pro", "--plan");

    // Works beside a running server: both open the same WAL file, and every write is one immediate transaction.
    const db = openDatabase(databasePath(dataDir));
    const services = createServices(db);
    try {
      // One transaction: the project never exists without its three keys.
      const { organisation, project, keys } = immediate(db, () => {
        const publicTicketCreation = values["public-tickets"] === true;
        let created: { organisation: { id: string }; project: { id: string; name: string; ownerEmail: string } };
        if (organisationId) {
          // Another project of an existing organisation: its people reach it at once.
          const organisation = services.projects.organisation(organisationId);
          if (!organisation) throw new CliError(`no organisation ${organisationId} in ${databasePath(dataDir)}`, "NOT_FOUND", "`svc whoami` (signed in) lists your organisations and their projects");
          const owner = ownerEmail ?? services.projects.firstOwnerEmail(organisationId) ?? "owner@example.com";
          created = { organisation, project: services.projects.createProject(organisationId, { name: projectName, ownerEmail: owner, plan, publicTicketCreation }) };
        } else {
          created = services.projects.createOrganisationWithProject({ projectName, ownerEmail: ownerEmail!, plan, publicTicketCreation });
        }
        return { ...created, keys: services.projects.mintStarterKeys(created.project.id) };
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
        console.log(`Data: ${databasePath(dataDir)}`);
        console.log("Keys (shown only now, store them safely):");
        console.log(`  admin   ${keys.admin}`);
        console.log(`  client  ${keys.client}`);
        console.log(`  server  ${keys.server}`);
      }
      return 0;
    } finally {
      closeServices(services);
      db.close();
    }
  },
};

export const versionCommand: Command = {
  name: "version",
  summary: "Print the version",
  examples: ["svc version", "svc version --json"],
  flags: { json: { type: "boolean", help: "Print {version, bun} as JSON" } },
  run({ values }) {
    console.log(values.json ? JSON.stringify({ version: VERSION, bun: Bun.version }) : `svc ${VERSION} (bun ${Bun.version})`);
    return 0;
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
  summary: "Write a consistent copy of the database while the server runs (VACUUM INTO)",
  details: ["The copy is a complete SQLite database (mode 0600): restore by starting `svc serve --data` on a directory holding it as service.db."],
  examples: ["svc backup --out backup-2026-11-21.db", "svc backup --data /var/lib/svc --out /backups/svc.db"],
  flags: {
    out: { type: "string", value: "FILE", help: "File to write (required; an existing file is never overwritten)" },
    data: { type: "string", value: "DIR", help: "Directory of the database (default: SERVICE_DATA_DIR, else ./data)" },
    json: { type: "boolean", help: "Print {out}, the path written, as JSON (failures as one JSON object on stderr)" },
  },
  run({ values }) {
    const out = values.out as string | undefined;
    if (!out) throw new UsageError("--out FILE is required");
    const target = resolve(out);
    if (existsSync(target)) throw new CliError(`${target} already exists`, "ALREADY_EXISTS", "choose a new file name (backups never overwrite)");
    const dataDir = resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
    const source = databasePath(dataDir);
    if (!existsSync(source)) throw new CliError(`no database at ${source}`, "NOT_FOUND", "pass --data DIR, the directory `svc serve --data` uses");
    // The copy holds every key hash and session: create it 0600 before SQLite writes into it (VACUUM INTO accepts an empty file).
    try {
      closeSync(openSync(target, "wx", 0o600));
    } catch (err) {
      throw new CliError(`cannot create ${target}: ${(err as Error).message}`, "ERROR");
    }
    const db = openDatabase(source, { migrate: false });
    try {
      db.query("VACUUM INTO ?").run(target);
    } catch (err) {
      rmSync(target, { force: true });
      throw err;
    } finally {
      db.close();
    }
    console.log(values.json ? JSON.stringify({ out: target }) : `backup written to ${target}`);
    return 0;
  },
};
