// The sign-in pages are plain HTML embedded in the binary; no script, no CDN.
import layoutImport from "./layout.html" with { type: "text" };
import signinImport from "./signin.html" with { type: "text" };
import accountImport from "./account.html" with { type: "text" };
import magicImport from "./magic.html" with { type: "text" };
import invitationImport from "./invitation.html" with { type: "text" };
import setupImport from "./setup.html" with { type: "text" };
import setupDoneImport from "./setup-done.html" with { type: "text" };
import deviceImport from "./device.html" with { type: "text" };
import deviceEnterImport from "./device-enter.html" with { type: "text" };
import messageImport from "./message.html" with { type: "text" };

/** `type: "text"` makes each import the file's text; bun-types still declares `*.html` as an HTMLBundle. */
const text = (imported: unknown) => imported as string;
const layoutHtml = text(layoutImport);
const signinHtml = text(signinImport);
const accountHtml = text(accountImport);
const magicHtml = text(magicImport);
const invitationHtml = text(invitationImport);
const setupHtml = text(setupImport);
const setupDoneHtml = text(setupDoneImport);
const deviceHtml = text(deviceImport);
const deviceEnterHtml = text(deviceEnterImport);
const messageHtml = text(messageImport);

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Fills `{{name}}` (escaped) and `{{{name}}}` (already-safe HTML); a missing value is a bug. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\{?)(\w+)\}?\}\}/g, (_, raw: string, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`page template value missing: ${name}`);
    return raw ? value : escapeHtml(value);
  });
}

function page(title: string, fragment: string, values: Record<string, string>): string {
  return fill(layoutHtml, { title, content: fill(fragment, values) });
}

export type PageProject = { id: string; name: string; organisationName: string };

export function signinPage(input: { csrf: string; redirect: string; ssoHref: string | null }): string {
  const sso = input.ssoHref
    ? `<hr><p class="muted">Or use your organisation's identity provider.</p><a class="button secondary" href="${escapeHtml(input.ssoHref)}">Sign in with SSO</a>`
    : "";
  return page("Sign in", signinHtml, { csrf: input.csrf, redirect: input.redirect, sso });
}

export function accountPage(input: { email: string; csrf: string; projects: PageProject[]; next: string | null }): string {
  const projects =
    input.projects.length === 0
      ? `<p>None yet: ask an owner to invite you.</p>`
      : `<ul>${input.projects.map((p) => `<li>${escapeHtml(p.name)} <span class="muted">(${escapeHtml(p.organisationName)}, <code>${escapeHtml(p.id)}</code>)</span></li>`).join("")}</ul>`;
  const next = `<p><a class="button" href="${escapeHtml(input.next ?? "/")}">${input.next ? "Continue" : "Open the dashboard"}</a></p>`;
  return page("Signed in", accountHtml, { email: input.email, csrf: input.csrf, projects, next, invite: inviteForm(input.csrf, input.projects) });
}

/** Invite a teammate into one of the signed-in person's organisations (one option per organisation, named by a project of it). */
function inviteForm(csrf: string, projects: PageProject[]): string {
  if (projects.length === 0) return "";
  const seen = new Set<string>();
  const options = projects
    .filter((p) => !seen.has(p.organisationName) && seen.add(p.organisationName))
    .map((p) => `<option value="${escapeHtml(p.id)}">${escapeHtml(p.organisationName)}</option>`)
    .join("");
  return `<hr><form method="post" action="/auth/invite">
  <p class="muted">Invite a teammate: they get a sign-in link.</p>
  <input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
  <label for="invite_email">Email</label><input id="invite_email" name="email" type="email" required>
  <label for="invite_project">Organisation</label><select id="invite_project" name="project_id">${options}</select>
  <label for="invite_role">Role</label><select id="invite_role" name="role"><option value="editor">editor: reads and writes</option><option value="viewer">viewer: reads</option><option value="owner">owner: also manages keys, settings and people</option></select>
  <button type="submit">Invite</button>
</form>`;
}

/** A sign-in link's page; an invitation's link asks the person to accept it (using it is accepting). */
export function magicPage(input: { csrf: string; token: string; invitation?: { organisationName: string; role: string } | null }): string {
  if (input.invitation) return page("Accept the invitation", invitationHtml, { csrf: input.csrf, token: input.token, organisation: input.invitation.organisationName, role: input.invitation.role });
  return page("Sign in", magicHtml, { csrf: input.csrf, token: input.token });
}

export function setupPage(input: { csrf: string; token: string }): string {
  return page("Set up svc", setupHtml, input);
}

/** After the first-run setup: the project's keys, shown once, and the next commands with this server's URL in them. */
export function setupDonePage(input: {
  email: string;
  organisation: string;
  project: string;
  projectId: string;
  base: string;
  keys: { admin: string; server: string; client: string };
}): string {
  const loginCommand = input.base === "http://localhost:8080" ? "svc login" : `svc login --url ${input.base}`;
  return page("Your project is ready", setupDoneHtml, {
    email: input.email,
    organisation: input.organisation,
    project: input.project,
    projectId: input.projectId,
    base: input.base,
    adminKey: input.keys.admin,
    serverKey: input.keys.server,
    clientKey: input.keys.client,
    loginCommand,
  });
}

export function devicePage(input: {
  csrf: string;
  email: string;
  userCode: string;
  clientName: string | null;
  projects: PageProject[];
  selectedProjectId: string | null;
}): string {
  const client = input.clientName ? ` from <strong>${escapeHtml(input.clientName)}</strong>` : "";
  const options = input.projects
    .map((p) => `<option value="${escapeHtml(p.id)}"${p.id === input.selectedProjectId ? " selected" : ""}>${escapeHtml(p.name)} (${escapeHtml(p.organisationName)})</option>`)
    .join("");
  const projectPicker =
    input.projects.length === 0
      ? `<p class="muted">You have no projects yet; the device signs in without one.</p>`
      : `<label for="project_id">Project for this device</label><select id="project_id" name="project_id">${options}</select>`;
  return page("Approve device sign-in", deviceHtml, { csrf: input.csrf, email: input.email, userCode: input.userCode, client, projectPicker });
}

export function deviceEnterPage(prompt: string): string {
  return page("Device sign-in", deviceEnterHtml, { prompt });
}

export function messagePage(title: string, text: string, extraHtml = ""): string {
  return page(title, messageHtml, { text, extra: extraHtml });
}
