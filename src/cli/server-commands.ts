import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { type } from "arktype";
import {
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  EmailText,
  PortText,
  UsageError,
  databasePath,
  parseOrThrow,
} from "../lib/config";
import { openDatabase } from "../lib/db";
import { KEY_SECRET_PATTERN } from "../modules/keys/service";
import { closeServices, createServices } from "../app";
import { startServer } from "../server";
import { signInOptionsFromEnv } from "../modules/identity/options";
import { VERSION } from "../version";
import type { Command } from "./command";

function portFrom(flag: unknown, env: string | undefined, what: string): number {
  const text = typeof flag === "string" ? flag : env;
  return text === undefined ? DEFAULT_PORT : parseOrThrow(PortText, text, what);
}

export const serveCommand: Command = {
  name: "serve",
  summary: "Run the HTTP server (admin API, SDK paths, device sign-in, intake) on one port",
  usage: "svc serve [--port 8080] [--host 0.0.0.0] [--data ./data] [--edge-only] [--no-request-log]",
  examples: ["svc serve", "svc serve --port 9000 --data /var/lib/svc", "PORT=9000 SERVICE_DATA_DIR=/data svc serve"],
  options: {
    port: { type: "string" },
    host: { type: "string" },
    data: { type: "string" },
    "edge-only": { type: "boolean" },
    "no-request-log": { type: "boolean" },
  },
  async run({ values }) {
    const port = portFrom(values.port, process.env.PORT, "--port");
    const host = (values.host as string | undefined) ?? process.env.HOST ?? DEFAULT_HOST;
    if (host.trim() === "") throw new UsageError("--host must not be empty");
    const dataDir = resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
    const initAdminKey = process.env.SERVICE_INIT_ADMIN_KEY || undefined;
    // Checked without parseOrThrow so that the message never echoes the secret.
    if (initAdminKey && !KEY_SECRET_PATTERN.test(initAdminKey)) {
      throw new UsageError("SERVICE_INIT_ADMIN_KEY must be sdk_admin_ followed by 16-128 letters or digits");
    }
    const adminEmail = process.env.SERVICE_ADMIN_EMAIL || undefined;
    if (adminEmail) parseOrThrow(EmailText, adminEmail, "SERVICE_ADMIN_EMAIL");

    const server = await startServer({
      port,
      host,
      dataDir,
      initAdminKey,
      adminEmail,
      signIn: signInOptionsFromEnv(process.env),
      edgeOnly: values["edge-only"] === true,
      logRequests: values["no-request-log"] !== true,
    });
    const displayHost = host.includes(":") ? `[${host}]` : host;
    console.log(`listening on http://${displayHost}:${server.port}`);

    await new Promise<void>((done) => {
      const shutdown = async (signal: string) => {
        process.off("SIGTERM", onTerm);
        process.off("SIGINT", onInt);
        console.log(JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "shutting down", signal }));
        await server.stop();
        done();
      };
      const onTerm = () => void shutdown("SIGTERM");
      const onInt = () => void shutdown("SIGINT");
      process.on("SIGTERM", onTerm);
      process.on("SIGINT", onInt);
    });
    return 0;
  },
};

export const initCommand: Command = {
  name: "init",
  summary: "Create an organisation, a project, its owner and one admin, client and server key",
  usage: "svc init [--data ./data] [--project NAME] [--owner EMAIL] [--plan pro|free] [--public-tickets] [--json]",
  examples: ["svc init --json", "svc init --project Shop --owner me@example.com --public-tickets --json"],
  options: {
    data: { type: "string" },
    project: { type: "string" },
    owner: { type: "string" },
    plan: { type: "string" },
    "public-tickets": { type: "boolean" },
    json: { type: "boolean" },
  },
  run({ values }) {
    const dataDir = resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
    const projectName = ((values.project as string | undefined) ?? "My project").trim();
    if (projectName === "" || projectName.length > 200) throw new UsageError("--project must be 1-200 characters");
    const ownerEmail = parseOrThrow(EmailText, (values.owner as string | undefined) ?? process.env.SERVICE_ADMIN_EMAIL ?? "owner@example.com", "--owner");
    const plan = parseOrThrow(type("'pro' | 'free'"), (values.plan as string | undefined) ?? "pro", "--plan");

    // Works beside a running server: both open the same WAL file, and every write is one immediate transaction.
    const db = openDatabase(databasePath(dataDir));
    const services = createServices(db);
    try {
      const { organisation, project } = services.projects.createOrganisationWithProject({
        projectName,
        ownerEmail,
        plan,
        publicTicketCreation: values["public-tickets"] === true,
      });
      const origin = services.projects.allowedOrigin(project.id);
      const admin = services.keys.mint(project.id, { type: "admin", name: "init admin key", allowedOrigin: origin });
      const client = services.keys.mint(project.id, { type: "client", name: "init client key", allowedOrigin: origin });
      const server = services.keys.mint(project.id, { type: "server", name: "init server key", allowedOrigin: origin });
      const result = {
        organisationId: organisation.id,
        projectId: project.id,
        ownerEmail: project.ownerEmail,
        adminKey: admin.key,
        clientKey: client.key,
        serverKey: server.key,
      };
      if (values.json) {
        console.log(JSON.stringify(result));
      } else {
        console.log(`Created project "${project.name}" (${project.id}) in organisation ${organisation.id}, owner ${project.ownerEmail}.`);
        console.log(`Data: ${databasePath(dataDir)}`);
        console.log("Keys (shown only now, store them safely):");
        console.log(`  admin   ${admin.key}`);
        console.log(`  client  ${client.key}`);
        console.log(`  server  ${server.key}`);
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
  usage: "svc version [--json]",
  examples: ["svc version"],
  options: { json: { type: "boolean" } },
  run({ values }) {
    console.log(values.json ? JSON.stringify({ version: VERSION, bun: Bun.version }) : `svc ${VERSION} (bun ${Bun.version})`);
    return 0;
  },
};

export const healthcheckCommand: Command = {
  name: "healthcheck",
  summary: "Exit 0 when the local server answers GET /healthz (for Docker HEALTHCHECK)",
  usage: "svc healthcheck [--port 8080] [--host 127.0.0.1] [--timeout-ms 2000]",
  examples: ["svc healthcheck", "svc healthcheck --port 9000"],
  options: { port: { type: "string" }, host: { type: "string" }, "timeout-ms": { type: "string" } },
  async run({ values }) {
    const port = portFrom(values.port, process.env.PORT, "--port");
    const host = (values.host as string | undefined) ?? "127.0.0.1";
    const timeout = values["timeout-ms"] === undefined ? 2000 : parseOrThrow(type("string.integer.parse").to("1 <= number <= 60000"), values["timeout-ms"], "--timeout-ms");
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/healthz`;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeout) });
      if (res.ok) {
        console.log(`healthy: ${url}`);
        return 0;
      }
      console.error(`unhealthy: ${url} answered ${res.status}`);
    } catch (err) {
      console.error(`unhealthy: ${url}: ${(err as Error).message}`);
    }
    return 1;
  },
};

export const backupCommand: Command = {
  name: "backup",
  summary: "Write a consistent copy of the database while the server runs (VACUUM INTO)",
  usage: "svc backup --out FILE [--data ./data]",
  examples: ["svc backup --out backup-2026-11-21.db", "svc backup --data /var/lib/svc --out /backups/svc.db"],
  options: { out: { type: "string" }, data: { type: "string" } },
  run({ values }) {
    const out = values.out as string | undefined;
    if (!out) throw new UsageError("--out FILE is required\nRun `svc help backup` for usage.");
    const target = resolve(out);
    if (existsSync(target)) {
      console.error(`error: ${target} already exists; choose a new file name (backups never overwrite)`);
      return 1;
    }
    const dataDir = resolve((values.data as string | undefined) ?? process.env.SERVICE_DATA_DIR ?? DEFAULT_DATA_DIR);
    const source = databasePath(dataDir);
    if (!existsSync(source)) {
      console.error(`error: no database at ${source}; pass --data DIR`);
      return 1;
    }
    const db = openDatabase(source, { migrate: false });
    try {
      db.query("VACUUM INTO ?").run(target);
    } finally {
      db.close();
    }
    console.log(`backup written to ${target}`);
    return 0;
  },
};
