import { nodeCrypto } from "../lib/node-crypto";
import { pkceChallenge } from "../lib/ids";
import { hostname } from "node:os";
import { UsageError } from "../lib/config";
import {
  type Credentials,
  NetworkError,
  credentialsFromTokenResponse,
  credentialsPath,
  deleteCredentials,
  postJson,
  readCredentials,
  requestedServer,
  resolveServerUrl,
  writeCredentials,
} from "./client";
import { JSON_FLAG, emit } from "./client-command";
import type { Command } from "./command";
import { CliError } from "./errors";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** PKCE (RFC 7636): a 64-character verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = nodeCrypto().randomBytes(48).toString("base64url");
  return { verifier, challenge: pkceChallenge(verifier) };
}

/** `$BROWSER` (split on spaces, URL appended), else the platform's opener. */
function browserCommand(url: string): string[] {
  const browser = process.env.BROWSER?.trim();
  if (browser) return [...browser.split(/\s+/), url];
  if (process.platform === "darwin") return ["open", url];
  if (process.platform === "win32") return ["cmd", "/c", "start", "", url];
  return ["xdg-open", url];
}

function openBrowser(url: string): void {
  const cmd = browserCommand(url);
  const failed = (why: string) => console.error(`Could not open a browser (${cmd[0]}: ${why}); open the URL above yourself.`);
  try {
    const child = Bun.spawn(cmd, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    child.unref();
    void child.exited.then((code) => {
      if (code !== 0) failed(`exit status ${code}`);
    });
  } catch (err) {
    failed((err as Error).message);
  }
}

/** A spinner on stderr while we wait, only for a person watching a terminal. */
function startSpinner(text: string): () => void {
  if (!process.stderr.isTTY) return () => {};
  const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
  let i = 0;
  const timer = setInterval(() => process.stderr.write(`\r${frames[i++ % frames.length]} ${text}`), 100);
  return () => {
    clearInterval(timer);
    process.stderr.write("\r\x1b[K");
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sign-in did not complete: exit 1 with the device flow's reason as the code. */
class LoginFailed extends CliError {
  constructor(message: string, code = "LOGIN_FAILED") {
    super(message, code);
  }
}

/** The page that approves this code; with --project, that project is preselected there. */
function approvalUrl(code: DeviceCode, project: string | undefined): string {
  if (!code.verification_uri_complete) return code.verification_uri;
  if (!project) return code.verification_uri_complete;
  const url = new URL(code.verification_uri_complete);
  url.searchParams.set("project_id", project);
  return url.toString();
}

type DeviceCode = { device_code: string; user_code: string; verification_uri: string; verification_uri_complete?: string; expires_in: number; interval: number };

/** Polls the token operation at the server's interval until it answers tokens or a final error. */
async function pollForTokens(serverUrl: string, code: DeviceCode, verifier: string): Promise<any> {
  let intervalMs = Math.max(1, code.interval || 5) * 1000;
  const deadline = Date.now() + Math.max(1, code.expires_in || 900) * 1000;
  let networkWarned = false;
  for (;;) {
    await sleep(intervalMs);
    if (Date.now() > deadline) throw new LoginFailed("The sign-in code expired before it was approved. Run `svc login` again.", "EXPIRED_TOKEN");
    let res: { status: number; body: any };
    try {
      res = await postJson(serverUrl, "/auth/device/token", { grant_type: DEVICE_GRANT, device_code: code.device_code, code_verifier: verifier });
    } catch (err) {
      if (!(err instanceof NetworkError)) throw err;
      // A blip while the user is in the browser should not lose the sign-in: keep polling until the code expires.
      if (!networkWarned) console.error(`warning: ${err.message}; still trying`);
      networkWarned = true;
      continue;
    }
    if (res.status === 200) return res.body;
    switch (res.body?.error) {
      case "authorization_pending":
        continue;
      case "slow_down":
        intervalMs = typeof res.body.interval === "number" ? Math.max(intervalMs, res.body.interval * 1000) : intervalMs + 5000;
        continue;
      case "access_denied":
        throw new LoginFailed("Sign-in was denied in the browser.", "ACCESS_DENIED");
      case "expired_token":
        throw new LoginFailed("The sign-in code expired before it was approved. Run `svc login` again.", "EXPIRED_TOKEN");
      default: {
        const what = typeof res.body?.error === "string" ? res.body.error : `HTTP ${res.status}`;
        const why = res.body?.error_description ?? res.body?.detail;
        throw new LoginFailed(`Sign-in failed: ${what}${why ? ` (${why})` : ""}.`);
      }
    }
  }
}

/** The credentials file, or null when it is missing or broken (login replaces it, logout deletes it). */
function existingCredentials(): Credentials | null {
  try {
    return readCredentials();
  } catch {
    return null;
  }
}

/**
 * Nothing answered the first call: name the URL, where it came from and how to
 * point at another server (a server started with --port 9000 is the usual case).
 */
function unreachable(serverUrl: string, err: NetworkError, flag: string | undefined): CliError {
  const refused = /ECONNREFUSED|Unable to connect/i.test(err.message);
  const from = flag ? "--url" : process.env.SERVICE_URL ? "SERVICE_URL" : existingCredentials()?.server_url ? "the stored credentials" : "the default";
  return new CliError(
    refused ? `could not reach ${serverUrl}: nothing answers there (connection refused)` : err.message,
    "NETWORK",
    `${serverUrl} comes from ${from}. Is \`svc serve\` running there? For a server on another port or host, pass --url (\`svc login --url http://localhost:9000\`) or set SERVICE_URL.`,
  );
}

export const loginCommand: Command = {
  name: "login",
  summary: "Sign in through the browser (device flow) and store the credentials",
  details: [
    "Signs in to --url, else SERVICE_URL, else the server of the stored credentials, else http://localhost:8080, and stores the pair in ~/.service/credentials (mode 0600) with that server as its server_url, replacing any stored credentials. Stored credentials are only ever sent to that server: to use another one, run `svc login --url` for it.",
  ],
  examples: ["svc login", "svc login --project 6f1c… --url https://flags.example.com", "svc login --no-browser"],
  flags: {
    project: { type: "string", value: "ID", help: "Preselect this project on the approval page (the one you approve there is bound)" },
    "no-browser": { type: "boolean", help: "Only print the approval URL and code; do not open a browser ($BROWSER, else the platform opener)" },
    url: { type: "string", value: "URL", help: "Server to sign in to (default: SERVICE_URL, else the stored credentials' server, else http://localhost:8080)" },
    json: { type: "boolean", help: "Print the result (user, project, server, credentials path) as JSON; failures as one JSON object on stderr" },
  },
  async run({ values }) {
    const project = values.project as string | undefined;
    if (project !== undefined && (project.length < 1 || project.length > 128)) throw new UsageError("--project must be 1-128 characters");
    let serverUrl: string;
    try {
      serverUrl = resolveServerUrl(values.url as string | undefined, process.env, existingCredentials());
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { verifier, challenge } = pkcePair();
    let started: Awaited<ReturnType<typeof postJson>>;
    try {
      started = await postJson(serverUrl, "/auth/device/code", {
        code_challenge: challenge,
        code_challenge_method: "S256",
        client_name: `svc CLI on ${hostname()}`.slice(0, 100),
      });
    } catch (err) {
      if (err instanceof NetworkError) throw unreachable(serverUrl, err, values.url as string | undefined);
      throw err;
    }
    const code = started.body as DeviceCode;
    if (started.status !== 200 || typeof code?.device_code !== "string" || typeof code.user_code !== "string") {
      throw new CliError(
        `${serverUrl} did not start a sign-in (HTTP ${started.status}): ${JSON.stringify(started.body)?.slice(0, 300)}`,
        "LOGIN_FAILED",
        "check that --url (or SERVICE_URL) names an svc server",
      );
    }
    const openUrl = approvalUrl(code, project);
    console.error(`To sign in, open ${code.verification_uri} and enter the code ${code.user_code}`);
    if (openUrl !== code.verification_uri) console.error(`(or open ${openUrl})`);
    if (!values["no-browser"]) openBrowser(openUrl);

    const stopSpinner = startSpinner("Waiting for approval in the browser…");
    let tokens: any;
    try {
      tokens = await pollForTokens(serverUrl, code, verifier);
    } catch (err) {
      stopSpinner();
      throw err;
    }
    stopSpinner();
    // The project bound is the one approved in the browser; --project only preselected it there.
    const credentials = credentialsFromTokenResponse(tokens, { server_url: serverUrl, project_id: project ?? null, user_email: "" });
    writeCredentials(credentials);
    if (project && credentials.project_id !== project) {
      console.error(`warning: you approved project ${credentials.project_id ?? "(none)"} in the browser, not ${project}; that one is bound (change it with \`svc bind\`).`);
    }

    const summary = { user_email: credentials.user_email, project_id: credentials.project_id, server_url: serverUrl, credentials: credentialsPath() };
    emit(values.json, summary, () =>
      [
        `Signed in to ${serverUrl} as ${credentials.user_email || "(unknown)"}${credentials.project_id ? `; project ${credentials.project_id}` : ""}.`,
        `Credentials saved to ${summary.credentials}.`,
      ].join("\n"),
    );
    if (process.env.SERVICE_CLI_TOKEN) console.error("note: SERVICE_CLI_TOKEN is set and wins over these credentials until you unset it.");
    return 0;
  },
};

export const logoutCommand: Command = {
  name: "logout",
  summary: "Revoke the session at the server that issued it and delete the local credentials",
  details: [
    "The refresh token is revoked only at the server that issued it (the credentials' server_url) and never sent anywhere else. When --url or SERVICE_URL names another server, nothing is sent there: logout says whose credentials they were, revokes them at their own server and deletes them. The local file is deleted even when the revoke fails (with a warning).",
  ],
  examples: ["svc logout"],
  flags: {
    url: { type: "string", value: "URL", help: "Only compared with the credentials' server (the revoke always goes to the server that issued them)" },
    json: JSON_FLAG,
  },
  async run({ values }) {
    let requested: ReturnType<typeof requestedServer> = null;
    try {
      requested = requestedServer(values.url as string | undefined, process.env);
    } catch (err) {
      // Only --url is the user's typing here; a broken SERVICE_URL names no server to compare with.
      if (values.url !== undefined) throw new UsageError(`--url: ${(err as Error).message}`);
    }
    // An unreadable file (or one that does not name its server) has nothing to revoke; it is deleted all the same.
    const credentials = existingCredentials();
    if (!credentials) {
      const deleted = deleteCredentials();
      emit(values.json, { signedOut: deleted, revoked: false }, () =>
        deleted ? "Deleted unreadable credentials (nothing was sent to any server)." : "Not signed in; nothing to do.",
      );
      return 0;
    }
    // The refresh token goes to the server that issued it and nowhere else, whatever --url/SERVICE_URL say.
    const serverUrl = credentials.server_url;
    const elsewhere = requested && requested.url !== serverUrl ? requested : null;
    let warning: string | null = null;
    try {
      const res = await postJson(serverUrl, "/auth/device/revoke", { token: credentials.refresh_token });
      if (res.status >= 300) warning = `${serverUrl} answered HTTP ${res.status} to the revoke`;
    } catch (err) {
      warning = (err as Error).message;
    }
    // The local file goes whatever the server said: a user who logs out must not stay signed in on this machine.
    deleteCredentials();
    if (elsewhere) {
      console.error(
        `note: the stored credentials were issued by ${serverUrl}, not ${elsewhere.url} (${elsewhere.from}), so the revoke went to ${serverUrl} only, and they were deleted here. Nothing was sent to ${elsewhere.url}.`,
      );
    }
    if (warning) console.error(`warning: could not revoke the session on the server (${warning}); the local credentials were deleted anyway.`);
    emit(values.json, { signedOut: true, revoked: warning === null, user_email: credentials.user_email, server_url: serverUrl }, () =>
      `Signed out${credentials.user_email ? ` ${credentials.user_email}` : ""} from ${serverUrl}.`,
    );
    return 0;
  },
};
