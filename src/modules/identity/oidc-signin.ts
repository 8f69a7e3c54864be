import { notFound } from "../../lib/errors";
import { randomBase62, sha256Hex } from "../../lib/ids";
import type { Tx } from "../../lib/store";
import { deleteExpiredOidcLogins, findBoundUserId, findMemberById, hasIdentityAt, insertIdentity, insertOidcLogin, takeOidcLogin, touchIdentity } from "./store";
import { OidcError, type OidcIdentity, sealPendingLogin, unsealPendingLogin } from "./oidc";
import type { IdentityCore, SignInResult } from "./core";
import type { SignedInUser } from "./types";

// Sign-in through the OIDC provider: the pending login, the callback and the account it binds.

const OIDC_LOGIN_TTL_MS = 10 * 60_000;

/**
 * Starts a sign-in at the provider. The browser gets `<state>.<browserKey>`
 * (the `svc_oidc` cookie); the database keeps only sha256(state) and the
 * PKCE verifier and nonce sealed under a key derived from browserKey, so
 * that a copy of the database cannot finish anybody's sign-in.
 */
export async function beginOidc(core: IdentityCore, input: { redirect: string | undefined; baseUrl: string }): Promise<{ url: string; cookie: string }> {
  if (!core.oidc) throw notFound("Single sign-on is not configured on this server");
  const state = randomBase62(32);
  const browserKey = randomBase62(43);
  const nonce = randomBase62(32);
  const codeVerifier = randomBase62(64);
  // Discovery first: a provider that cannot be reached leaves no pending login behind.
  const url = await core.oidc.authorizationUrl({ redirectUri: `${input.baseUrl}/auth/oidc/callback`, state, nonce, codeVerifier });
  const stateHash = sha256Hex(state);
  const sealed = sealPendingLogin(browserKey, stateHash, { codeVerifier, nonce });
  const now = core.now();
  await core.store.write(async (tx) => {
    await deleteExpiredOidcLogins(tx, core.iso(now));
    await insertOidcLogin(tx, { stateHash, sealed, redirect: input.redirect ?? null, createdAt: core.iso(now), expiresAt: core.iso(now + OIDC_LOGIN_TTL_MS) });
  });
  return { url, cookie: `${state}.${browserKey}` };
}

/**
 * The provider's redirect back (`callback`: every query parameter it
 * sent). The state must be the one of this browser's cookie, its pending
 * login unused and unexpired (it is deleted here: single use) and
 * unsealed by the cookie's key; then openid-client exchanges the code and
 * checks the id_token, and the account bound to (issuer, subject) signs in.
 */
export async function finishOidc(core: IdentityCore, input: { callback: URLSearchParams; stateCookie: string | undefined; baseUrl: string }): Promise<SignInResult> {
  if (!core.oidc) throw notFound("Single sign-on is not configured on this server");
  const state = input.callback.get("state");
  const dot = input.stateCookie?.indexOf(".") ?? -1;
  const cookieState = dot > 0 ? input.stateCookie!.slice(0, dot) : "";
  const browserKey = dot > 0 ? input.stateCookie!.slice(dot + 1) : "";
  if (!state || !cookieState || !browserKey || state !== cookieState) {
    throw new OidcError("This sign-in was started in another browser or has expired; start again", 401);
  }
  const stateHash = sha256Hex(state);
  const now = core.iso();
  // Taken (deleted) by one statement: of two callbacks with the same state, only one gets the row.
  const login = await core.store.write((tx) => takeOidcLogin(tx, stateHash));
  if (!login || login.expires_at <= now) throw new OidcError("This sign-in was already used or has expired; start again", 401);
  const secrets = unsealPendingLogin(browserKey, stateHash, login.sealed);
  if (!secrets) throw new OidcError("This sign-in was started in another browser; start again", 401);
  if (!input.callback.get("code")) throw new OidcError("The identity provider sent no authorization code", 502);
  const callbackUrl = new URL(`${input.baseUrl}/auth/oidc/callback`);
  for (const [name, value] of input.callback) callbackUrl.searchParams.append(name, value);
  const identity = await core.oidc.signIn({ callbackUrl, codeVerifier: secrets.codeVerifier, state, nonce: secrets.nonce });
  return core.store.write(async (tx) => {
    const user = await oidcAccount(core, tx, identity);
    return { sessionToken: await core.createSession(tx, user, "oidc", { issuer: identity.issuer }), user, redirect: login.redirect ?? undefined };
  });
}

/**
 * The account an OIDC identity signs in as; call inside the sign-in's
 * transaction (it locks the issuer: bindings of one issuer are decided one
 * at a time). A known (issuer, subject) is its bound user, whatever email
 * the provider sends now (the binding's email and last use are updated),
 * as long as that user still belongs to an organisation. An unknown one is
 * bound to the member whose address the (verified) email is, unless that
 * member is already bound to another subject of the same issuer.
 */
async function oidcAccount(core: IdentityCore, tx: Tx, identity: OidcIdentity): Promise<SignedInUser> {
  await tx.lock(`identity:oidc:${identity.issuer}`);
  const now = core.iso();
  const boundUserId = await findBoundUserId(tx, identity.issuer, identity.subject);
  if (boundUserId) {
    const user = await findMemberById(core.store, boundUserId);
    if (!user) throw new OidcError("Your account here no longer belongs to any organisation; ask an owner to invite you", 403);
    await touchIdentity(tx, identity, now);
    return user;
  }
  const user = await core.findMember(identity.email);
  if (!user) throw new OidcError(`${identity.email} has no account here; ask an owner to invite you`, 403);
  if (await hasIdentityAt(tx, identity.issuer, user.id)) throw new OidcError("This account is linked to another identity at that provider", 403);
  await insertIdentity(tx, identity, user.id, now);
  return user;
}
