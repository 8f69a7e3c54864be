import { t } from "elysia";
import { BodyObject, Integer, QueryObject, groupDigits } from "../../lib/http";
import { KEYS_PER_CALL, KEYS_PER_PROFILE, KEY_MAX, LOCALE_MAX, NAME_MAX, VALUE_MAX } from "./service";

const n = groupDigits;

export const KEY_RULE_TEXT = `1 to ${KEY_MAX} characters of \`A-Z a-z 0-9 _ . : -\` (pattern \`^[A-Za-z0-9_.:-]{1,${KEY_MAX}}$\`), e.g. \`checkout.button.pay\` or \`errors:not_found\``;
const VALUE_RULE_TEXT = `The translated text: a string of at most ${n(VALUE_MAX)} characters; tab and line breaks are kept, other control characters are refused. \`{name}\` placeholders are filled by the SDK's \`t(key, {vars})\`.`;

const Name = t.String({ minLength: 1, maxLength: NAME_MAX, description: "Unique in the project; usable in place of the id. No `/`, no surrounding spaces, not starting with `i18n_`." });
const Locale = t.String({
  minLength: 1,
  maxLength: LOCALE_MAX,
  description: `A BCP 47 language tag (\`en\`, \`de-CH\`, \`pt-BR\`, \`zh-Hant-TW\`), checked and stored in its canonical form (\`de-ch\` is stored as \`de-CH\`; \`en_US\` is refused). One profile per locale in a project (409 otherwise). At most ${LOCALE_MAX} characters.`,
  examples: ["de-CH"],
});
const ProfileRef = t.String({ minLength: 1, maxLength: 128, description: "The profile's id (`i18n_…`), or its name" });
// Key and value rules are checked by the service, not the schema, so that one refusal names every
// failing item of a push (`keys.3.key: …`, duplicates included) with the rule it broke.
const Key = t.String({ description: `The key: ${KEY_RULE_TEXT}` });
const Value = t.String({ description: VALUE_RULE_TEXT });

export const ProfileSchema = t.Object(
  {
    id: t.String({ description: "i18n_…" }),
    name: t.String(),
    locale: t.String({ description: "Canonical BCP 47 tag; the snapshot's `translations` carries the profile's keys under it" }),
    keyCount: Integer({ description: "How many keys the profile holds" }),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "I18nProfile",
    examples: [{ id: "i18n_3hQm9xKe2LbW0aTy7RvP", name: "web-de-ch", locale: "de-CH", keyCount: 412, createdAt: "2026-11-20T09:00:00.000Z", updatedAt: "2026-11-21T14:30:00.000Z" }],
  },
);

export const CreateProfileBody = BodyObject(
  { name: Name, locale: Locale },
  { examples: [{ name: "web-de-ch", locale: "de-CH" }, { name: "english", locale: "en" }] },
);

export const UpdateProfileBody = BodyObject(
  {
    name: t.Optional(Name),
    locale: t.Optional(Locale),
  },
  { examples: [{ name: "web-swiss-german" }, { locale: "de" }] },
);

export const KeySchema = t.Object(
  {
    profile_id: t.String({ description: "i18n_… of its profile" }),
    locale: t.String({ description: "Its profile's locale" }),
    key: t.String(),
    value: t.String(),
    createdAt: t.String(),
    updatedAt: t.String(),
  },
  {
    title: "I18nKey",
    examples: [
      { profile_id: "i18n_3hQm9xKe2LbW0aTy7RvP", locale: "de-CH", key: "checkout.button.pay", value: "Jetzt bezahlen", createdAt: "2026-11-20T09:00:00.000Z", updatedAt: "2026-11-20T09:00:00.000Z" },
    ],
  },
);

export const KeyListQuery = QueryObject({
  profile_id: t.Optional(ProfileRef),
  q: t.Optional(t.String({ maxLength: 100, description: "Case-insensitive substring over the key and the value (OR-matched)" })),
});

export const PushKeysBody = BodyObject(
  {
    profile_id: ProfileRef,
    keys: t.Array(BodyObject({ key: Key, value: Value }), {
      description: `Up to ${n(KEYS_PER_CALL)} keys, each at most once (a key twice in one call is VALIDATION naming both places). Keys the profile already has are skipped, never changed. A profile holds at most ${n(KEYS_PER_PROFILE)} keys.`,
    }),
  },
  {
    examples: [
      {
        profile_id: "i18n_3hQm9xKe2LbW0aTy7RvP",
        keys: [
          { key: "checkout.button.pay", value: "Jetzt bezahlen" },
          { key: "checkout.greeting", value: "Grüezi {name}!" },
        ],
      },
    ],
  },
);

export const PushResultSchema = t.Object(
  {
    added: t.Array(t.String(), { description: "Keys written, in the order sent" }),
    skipped: t.Array(t.String(), { description: "Keys the profile already had, left untouched, in the order sent" }),
    pushed_count: Integer({ description: "How many were added (the length of `added`)" }),
    skipped_count: Integer({ description: "How many were skipped (the length of `skipped`)" }),
  },
  { examples: [{ added: ["checkout.greeting"], skipped: ["checkout.button.pay"], pushed_count: 1, skipped_count: 1 }] },
);

export const KeyParam = t.Object({ key: t.String({ minLength: 1, maxLength: KEY_MAX, description: `The key (${KEY_RULE_TEXT})` }) });

export const UpdateKeyBody = BodyObject(
  {
    profile_id: t.Optional(ProfileRef),
    value: Value,
  },
  { examples: [{ profile_id: "i18n_3hQm9xKe2LbW0aTy7RvP", value: "Jetzt sicher bezahlen" }] },
);

/** `?profile_id=` of the single-key routes (or in the body). */
export const ProfileRefQuery = QueryObject({ profile_id: t.Optional(ProfileRef) });

export const DeleteKeyBody = BodyObject({ profile_id: t.Optional(ProfileRef) }, { examples: [{ profile_id: "i18n_3hQm9xKe2LbW0aTy7RvP" }] });
