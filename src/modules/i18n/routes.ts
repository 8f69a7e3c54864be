import { Elysia, t } from "elysia";
import { validation } from "../../lib/errors";
import { IdParam, ListQuery, describe, groupDigits, jsonBodyPlugin } from "../../lib/http";
import type { AppContext } from "../../lib/module";
import {
  CreateProfileBody,
  DeleteKeyBody,
  KEY_RULE_TEXT,
  KeyListQuery,
  KeyParam,
  KeySchema,
  ProfileRefQuery,
  ProfileSchema,
  PushKeysBody,
  PushResultSchema,
  UpdateKeyBody,
  UpdateProfileBody,
} from "./contract";
import { KEYS_PER_CALL, KEYS_PER_PROFILE, VALUE_MAX } from "./service";

const TAG = "i18n";
const n = groupDigits;

const PUBLISHING =
  "Published in the SDK snapshot's `translations` section as `{ \"<locale>\": { \"<key>\": \"value\" } }`, the same on every env, while the project's `moduleTranslations` is on (off: `{}`). " +
  "Every change to what is published moves every env's revision, so SDKs (`t(key)`) pick it up with the next snapshot. " +
  "A change that would make an env's snapshot over 5 MiB of JSON is VALIDATION (`snapshot: …`, saying by how many bytes) and writes nothing.";

/** `profile_id` of the single-key routes: in the JSON body or the query, once. */
function profileRef(fromBody: string | undefined, fromQuery: string | undefined): string {
  if (fromBody !== undefined && fromQuery !== undefined && fromBody !== fromQuery) {
    throw validation("profile_id differs between body and query", "profile_id: send it once, in the body or in the query");
  }
  const value = fromBody ?? fromQuery;
  if (value === undefined) throw validation("Request failed validation", "profile_id: required (in the JSON body or as ?profile_id=)");
  return value;
}

export function i18nRoutes(ctx: AppContext) {
  const { i18n } = ctx.services;
  return new Elysia({ name: "i18n", seed: ctx, prefix: "/api/admin/i18n" })
    .use(ctx.auth)
    .use(jsonBodyPlugin)
    .get("/profiles", async ({ principal, query }) => await i18n.listProfiles(principal.projectId, query.q), {
      admin: true,
      query: ListQuery,
      ...describe({ summary: "Translation profiles of the project (q over name and locale)", tag: TAG, auth: "admin", response: { 200: t.Array(ProfileSchema) } }),
    })
    .get("/profiles/:id", async ({ principal, params }) => await i18n.getProfile(principal.projectId, params.id), {
      admin: true,
      params: IdParam,
      ...describe({ summary: "Get a translation profile by id or name", tag: TAG, auth: "admin", errors: [404], response: { 200: ProfileSchema } }),
    })
    .post(
      "/profiles",
      async ({ principal, body, set }) => {
        const created = await i18n.createProfile(principal.projectId, body, principal.actor);
        set.status = 201;
        return created;
      },
      {
        admin: true,
        jsonObjectBody: true,
        body: CreateProfileBody,
        ...describe({
          summary: "Create a translation profile (one locale's keys)",
          tag: TAG,
          auth: "admin",
          errors: [409],
          description:
            "A profile holds the keys of one locale. `locale` is a BCP 47 tag checked with `Intl.getCanonicalLocales` and stored canonical (`de-ch` → `de-CH`); `en_US` and other non-tags are VALIDATION. " +
            "409 ALREADY_EXISTS when the name is taken, or when another profile of the project has the locale (one profile per locale: the snapshot publishes translations per locale). Answers the full profile (201). " +
            PUBLISHING,
          response: { 201: ProfileSchema },
        }),
      },
    )
    .patch("/profiles/:id", async ({ principal, params, body }) => await i18n.updateProfile(principal.projectId, params.id, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      params: IdParam,
      body: UpdateProfileBody,
      ...describe({
        summary: "Rename a translation profile or change its locale",
        tag: TAG,
        auth: "admin",
        errors: [404, 409],
        description:
          "Fields sent replace the stored ones: `name` (409 when taken), `locale` (canonicalised; 409 when another profile has it). The keys stay with the profile: with a new locale, SDKs find them under it. Nothing different from what is stored: nothing is written.",
        response: { 200: ProfileSchema },
      }),
    })
    .delete(
      "/profiles/:id",
      async ({ principal, params, set }) => {
        await i18n.removeProfile(principal.projectId, params.id, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        params: IdParam,
        ...describe({
          summary: "Delete a translation profile and all its keys",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "Its keys go with it (one audit row names how many). Its locale leaves the snapshot's `translations`.",
        }),
      },
    )
    .get("/keys", async ({ principal, query }) => await i18n.listKeys(principal.projectId, { profile: query.profile_id, q: query.q }), {
      admin: true,
      query: KeyListQuery,
      ...describe({
        summary: "Translation keys: of one profile (?profile_id=), or of every profile",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "`profile_id` (the profile's id or name) lists that profile's keys; without it, every key of the project, each with its `profile_id` and `locale`. `q` filters over the key and the value (case-insensitive substring). Sorted by key, then locale. A bare array (no pagination): a profile holds at most " +
          `${n(KEYS_PER_PROFILE)} keys.`,
        response: { 200: t.Array(KeySchema) },
      }),
    })
    .post("/keys", async ({ principal, body }) => await i18n.push(principal.projectId, body, principal.actor), {
      admin: true,
      jsonObjectBody: true,
      body: PushKeysBody,
      ...describe({
        summary: "Push keys into a profile, insert-only",
        tag: TAG,
        auth: "admin",
        errors: [404],
        description:
          "SPEC \"i18n keys\": keys the profile does not have are added; keys it has are left untouched (their value is never changed here: use PATCH /api/admin/i18n/keys/{key}). " +
          "The reply lists both in the order sent, with their counts. `profile_id` is the profile's id (or its name; 404 when there is none). " +
          `Limits: at most ${n(KEYS_PER_CALL)} keys per call; each key ${KEY_RULE_TEXT}; each value at most ${n(VALUE_MAX)} characters; a key at most once per call (a repeat is VALIDATION naming both places, since which value was meant cannot be known); a profile holds at most ${n(KEYS_PER_PROFILE)} keys; the request body at most the server's body limit (1 MB by default, 413 above: split large pushes, as \`svc i18n keys push\` does). ` +
          "The call is checked whole before anything is written and is one transaction: every problem is VALIDATION with `detail` naming each failing item (`keys.3.key: …`), and nothing is written. " +
          "Concurrent pushes of the same keys add each key exactly once. A push that adds nothing writes nothing (no audit row, no new revision). " +
          PUBLISHING,
        response: { 200: PushResultSchema },
      }),
    })
    .patch(
      "/keys/:key",
      async ({ principal, params, body, query }) => await i18n.updateKey(principal.projectId, profileRef(body.profile_id, query.profile_id), params.key, body.value, principal.actor),
      {
        admin: true,
        jsonObjectBody: true,
        params: KeyParam,
        body: UpdateKeyBody,
        query: ProfileRefQuery,
        ...describe({
          summary: "Change the value of one key (updateI18nKey)",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description:
            "`profile_id` (id or name) in the JSON body, or as `?profile_id=`; once (both and different: VALIDATION). `value` replaces the stored one. The key must exist in the profile (404 otherwise: add keys with POST /api/admin/i18n/keys). The same value writes nothing. Answers the key. " +
            PUBLISHING,
          response: { 200: KeySchema },
        }),
      },
    )
    .delete(
      "/keys/:key",
      async ({ principal, params, body, query, set }) => {
        await i18n.removeKey(principal.projectId, profileRef(body.profile_id, query.profile_id), params.key, principal.actor);
        set.status = 204;
      },
      {
        admin: true,
        jsonObjectBody: true,
        params: KeyParam,
        body: DeleteKeyBody,
        query: ProfileRefQuery,
        ...describe({
          summary: "Delete one key of a profile",
          tag: TAG,
          auth: "admin",
          errors: [404],
          description: "`profile_id` (id or name) as `?profile_id=`, or in a JSON body for clients that prefer one. 404 when the profile does not have the key.",
        }),
      },
    );
}
