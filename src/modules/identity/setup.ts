import { SYSTEM_ACTOR, recordAudit } from "../../lib/audit";
import { ORGANISATIONS_LOCK } from "../projects/service";
import { badRequest, validation } from "../../lib/errors";
import { countUsers, deleteSetupLinks, findFirstOrganisationId, insertOwnerMembershipIfAbsent } from "./store";
import { type IdentityCore, SETUP_LINK_TTL_MS, type SignInResult, organisationLock } from "./core";

// First run: the setup link and its form, and SERVICE_ADMIN_EMAIL.

/** Lock scope of first-run work (setup link, first owner, SERVICE_ADMIN_EMAIL). */
const SETUP_LOCK = "identity:setup";

/**
 * At server start. With `adminEmail` (SERVICE_ADMIN_EMAIL) that person is
 * made owner of the first organisation (a default one is created when
 * there is none) and signs in by magic link. Otherwise, while nobody
 * exists at all, it returns a fresh single-use setup link to print.
 */
export async function bootstrap(core: IdentityCore, input: { adminEmail?: string; baseUrl: string }): Promise<{ setupUrl: string } | null> {
  if (input.adminEmail) {
    await ensureAdmin(core, input.adminEmail);
    return null;
  }
  // The start calls this only when firstRunPending (first-run.ts) found nobody: its read, without the write lock,
  // is what answers every later start. Here the lock decides, a second server starting alongside included.
  return core.store.write(async (tx) => {
    await tx.lock(SETUP_LOCK);
    if ((await countUsers(core.store)) > 0) return null;
    // One live setup link at a time: a restart replaces the one printed before.
    await deleteSetupLinks(tx);
    const token = await core.issueLink(tx, "setup", null, undefined, SETUP_LINK_TTL_MS);
    return { setupUrl: `${input.baseUrl}/setup?token=${token}` };
  });
}

/** The setup form: creates the first organisation, project and owner, and signs the owner in. */
export async function completeSetup(
  core: IdentityCore,
  token: string,
  input: { email: string; organisationName: string; projectName: string },
): Promise<SignInResult & { projectId: string; organisationId: string; organisationName: string; projectName: string; keys: { admin: string; server: string; client: string } }> {
  if (input.organisationName.trim() === "") throw validation("organisation must not be empty", "organisation: at least one non-space character");
  if (input.projectName.trim() === "") throw validation("project must not be empty", "project: at least one non-space character");
  return core.store.write(async (tx) => {
    await tx.lock(SETUP_LOCK);
    await core.takeLink(tx, token, "setup");
    if ((await countUsers(core.store)) > 0) throw badRequest("svc is already set up", "token: sign in at /signin instead");
    const projects = core.ctx.services.projects;
    // The person at the setup page is who made the organisation, its project and its first keys.
    const actor = { email: input.email.trim().toLowerCase(), type: "user" };
    const { user, project, organisation } = await projects.createOrganisationWithProject({
      projectName: input.projectName.trim(),
      organisationName: input.organisationName.trim(),
      ownerEmail: input.email,
      actor,
    });
    // The first owner leaves setup with working keys (shown once), as `svc init` hands them out.
    const keys = await projects.mintStarterKeys(project.id, actor);
    const member = { id: user.id, email: user.email };
    return {
      sessionToken: await core.createSession(tx, user, "setup", {}, [organisation.id]),
      user: member,
      redirect: undefined,
      projectId: project.id,
      projectName: project.name,
      organisationId: organisation.id,
      organisationName: organisation.name,
      keys,
    };
  });
}

/** Whether anybody exists yet (then the setup link has no use). */
export async function isSetUp(core: IdentityCore, ): Promise<boolean> {
  return (await countUsers(core.store)) > 0;
}

async function ensureAdmin(core: IdentityCore, email: string): Promise<void> {
  await core.store.write(async (tx) => {
    await tx.lock(SETUP_LOCK);
    // The same lock as every organisation creation (and the headless first start): one first organisation across servers.
    await tx.lock(ORGANISATIONS_LOCK);
    if (await core.findMember(email)) return;
    const firstId = await findFirstOrganisationId(tx);
    const projects = core.ctx.services.projects;
    if (!firstId) {
      await projects.createOrganisationWithProject({ projectName: "Default project", organisationName: "Default organisation", ownerEmail: email });
      return;
    }
    await tx.lock(organisationLock(firstId));
    const user = await projects.findOrCreateUser(email);
    if ((await insertOwnerMembershipIfAbsent(tx, firstId, user.id, core.iso())) === 0) return;
    await recordAudit(tx, {
      projectId: null,
      organisationId: firstId,
      action: "member.add",
      subjectId: user.id,
      subjectName: user.email,
      actor: SYSTEM_ACTOR,
      detail: { role: "owner", via: "SERVICE_ADMIN_EMAIL" },
    });
  });
}
