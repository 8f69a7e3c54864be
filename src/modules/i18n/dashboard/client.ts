import { apiOf, call } from "../../../web/dashboard/api";
import type { projectRoutes } from "../../projects/routes";
import type { i18nRoutes } from "../routes";

export const i18nApi = apiOf<ReturnType<typeof i18nRoutes>>();
const projectApi = apiOf<ReturnType<typeof projectRoutes>>();

export type Profile = NonNullable<Awaited<ReturnType<typeof i18nApi.api.admin.i18n.profiles.get>>["data"]>[number];
export type TranslationKey = NonNullable<Awaited<ReturnType<typeof i18nApi.api.admin.i18n.keys.get>>["data"]>[number];

export const loadProfiles = () => call(i18nApi.api.admin.i18n.profiles.get({ query: {} }));
export const loadProfile = (ref: string) => call(i18nApi.api.admin.i18n.profiles({ id: ref }).get());
export const loadKeys = (profileId: string) => call(i18nApi.api.admin.i18n.keys.get({ query: { profile_id: profileId } }));

/** Whether the project publishes its translations to SDKs (Settings → modules). */
export const loadPublishing = async () => (await call(projectApi.api.admin.projects.current.get())).moduleTranslations;

/** The server's key rule (src/modules/i18n/service.ts KEY_PATTERN), for the form's hint. */
export const KEY_HINT = "1 to 200 of A-Z a-z 0-9 _ . : -, e.g. checkout.button.pay";
export const VALUE_MAX = 10_000;
