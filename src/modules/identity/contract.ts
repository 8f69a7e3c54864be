import { t } from "elysia";
import { BodyObject, QueryObject } from "../../lib/http";

const Email = t.String({ format: "email", maxLength: 254 });
const Csrf = t.Optional(t.String({ maxLength: 128, description: "CSRF token (or header X-CSRF-Token), equal to the svc_csrf cookie" }));
const LinkToken = t.String({ minLength: 1, maxLength: 128 });

export const RedirectQuery = QueryObject({ redirect: t.Optional(t.String({ maxLength: 2000 })) });

export const MagicLinkBody = BodyObject({
  email: Email,
  redirect: t.Optional(t.String({ maxLength: 2000, description: "A path on this server to open after sign-in" })),
  csrf: Csrf,
}, { examples: [{ email: "dana@example.com", redirect: "/device?user_code=WDJB-MJHT" }] });

export const MagicLinkSentSchema = t.Object({ ok: t.Literal(true), message: t.String() });

export const TokenQuery = QueryObject({ token: t.Optional(t.String({ maxLength: 128 })) });

export const MagicConsumeBody = BodyObject({ token: LinkToken, csrf: Csrf }, { examples: [{ token: "Qm3xT8vLk2RzY7wN4pJc9HdA1sFb6GeU0iKoXyZtVnM" }] });

export const SignedInSchema = t.Object({ ok: t.Literal(true), email: t.String(), redirect: t.String() });

export const SetupDoneSchema = t.Object(
  {
    ok: t.Literal(true),
    email: t.String(),
    redirect: t.String(),
    organisationId: t.String(),
    projectId: t.String(),
    keys: t.Object({
      admin: t.String({ description: "sdk_admin_…, shown only here" }),
      server: t.String({ description: "sdk_server_…, shown only here" }),
      client: t.String({ description: "sdk_client_…, shown only here" }),
    }),
  },
  { title: "SetupDone" },
);

export const LogoutBody = BodyObject({ csrf: Csrf }, { examples: [{ csrf: "h4Kd9sLq2XvB7nRt0YwZ3mPcE8uJ5aFg" }] });

export const SetupBody = BodyObject({
  token: LinkToken,
  email: Email,
  organisation: t.String({ minLength: 1, maxLength: 200 }),
  project: t.String({ minLength: 1, maxLength: 200 }),
  csrf: Csrf,
}, {
  examples: [{ token: "Zr8Xc2Vb5Nm1Lk4Jh7Gf0Ds3Ap6Qw9EeRtYuIoPaSdF", email: "ops@example.com", organisation: "Acme", project: "Checkout service" }],
});

export const OidcCallbackQuery = QueryObject({
  code: t.Optional(t.String({ maxLength: 4096 })),
  state: t.Optional(t.String({ maxLength: 256 })),
  error: t.Optional(t.String({ maxLength: 256 })),
  error_description: t.Optional(t.String({ maxLength: 1024 })),
});

export const Role = t.Union([t.Literal("owner"), t.Literal("editor"), t.Literal("viewer")], {
  description: "viewer reads; editor also writes; owner also manages members, keys, tokens and settings",
});

export const InviteBody = BodyObject(
  {
    email: Email,
    role: t.Optional(t.Union([t.Literal("owner"), t.Literal("editor"), t.Literal("viewer")], { description: "Default editor" })),
  },
  { additionalProperties: false, examples: [{ email: "dana@example.com", role: "editor" }] },
);

export const RoleBody = BodyObject({ role: Role }, { examples: [{ role: "viewer" }] });

export const EmailParam = t.Object({ email: t.String({ minLength: 3, maxLength: 254, description: "The member's email address" }) });

export const InviteFormBody = BodyObject({
  email: Email,
  project_id: t.String({ minLength: 1, maxLength: 128, description: "A project of the organisation to invite into" }),
  role: t.Optional(t.Union([t.Literal("owner"), t.Literal("editor"), t.Literal("viewer")], { description: "Default editor" })),
  csrf: Csrf,
}, { examples: [{ email: "dana@example.com", project_id: "0b9f6c2e-5d4a-4e8b-9c61-3f2a7d1e8b45", role: "editor" }] });

export const InvitationSchema = t.Object(
  {
    email: t.String(),
    role: Role,
    organisationId: t.String(),
    organisationName: t.String(),
    createdAt: t.String(),
    expiresAt: t.String({ description: "Until then the link accepts the invitation" }),
    status: t.Literal("invited", { description: "A member only once they accept (use the link); no access until then" }),
  },
  { title: "Invitation" },
);

export const MemberSchema = t.Union(
  [
    t.Object({ email: t.String(), role: Role, status: t.Literal("active"), joinedAt: t.String() }),
    t.Object(
      {
        email: t.String(),
        role: Role,
        status: t.Literal("invited", { description: "Invited, not accepted yet: reaches nothing until they use the invitation link" }),
        joinedAt: t.Null(),
        invitedAt: t.String(),
        expiresAt: t.String(),
      },
    ),
  ],
  { title: "Member" },
);

/** A new link for a pending invitation (POST /members/{email}/invite-link). */
export const InviteLinkSchema = t.Object(
  {
    email: t.String(),
    link: t.String({ description: "Single-use; accepts the invitation (and signs them in) until expiresAt. The link sent before no longer works." }),
    expiresAt: t.String(),
  },
  { title: "InviteLink", examples: [{ email: "dana@example.com", link: "https://flags.example.com/auth/magic?token=Qx3b9LmT0aZr7KpE…", expiresAt: "2026-12-05T14:00:00.000Z" }] },
);

export const MailSchema = t.Object(
  {
    configured: t.Boolean({ description: "False when no SMTP server is set (SERVICE_SMTP_URL): sign-in and invitation links then go only to the outbox file" }),
    outbox: t.Optional(t.String({ description: "Without SMTP, the file on the server holding the links (shown to owners)" })),
  },
  { title: "Mail" },
);

export const MeSchema = t.Object(
  {
    user: t.Object({ email: t.String({ description: "The person, or for a key or API token the actor its audit rows name" }) }),
    project: t.Union([t.Object({ id: t.String(), name: t.String() }), t.Null()]),
    projects: t.Array(t.Object({ id: t.String(), name: t.String(), organisationId: t.String(), organisationName: t.String() })),
    credential: t.Object({
      kind: t.Union([t.Literal("user_token"), t.Literal("session"), t.Literal("api_token"), t.Literal("admin_key")]),
      readOnly: t.Boolean({ description: "True when the caller may not write in the selected project" }),
      role: t.Union([Role, t.Null()], { description: "A person's role in the selected project's organisation" }),
      permissions: t.Array(t.Union([t.Literal("read"), t.Literal("write"), t.Literal("manage"), t.Literal("members")])),
    }),
    mail: t.Optional(MailSchema),
  },
  { title: "Me" },
);
