/* global fetch, sessionStorage */
/**
 * The console's only way to the API: same-origin `fetch` with the operator's bearer token. The token lives
 * in this tab's sessionStorage (gone when the tab closes), goes only into the Authorization header, and
 * never into a URL, a log line or the page.
 */

const TOKEN_KEY = 'agent-saga.console.token';

export const tokenStore = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/**
 * The API said no (or could not be reached): `status` is the HTTP status (0 when there was no answer),
 * `code` and `message` come from the API's `{ error: { code, message, … } }` body, `detail` holds the rest
 * of that error object (for example the approval's current status on APPROVAL_DECIDED).
 */
export class ApiRefusal extends Error {
  constructor(status, code, message, detail = {}) {
    super(message);
    this.name = 'ApiRefusal';
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
}

let onUnauthorized = () => {};

/** What to do when the API answers 401 to a stored token (the app shows the sign-in screen). */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/**
 * `method path` with a JSON body; resolves to the parsed answer, or throws {@link ApiRefusal}. `token`
 * overrides the stored one (the sign-in screen checks a token before keeping it).
 */
export async function api(method, path, body, token = tokenStore.get()) {
  if (!token) throw new ApiRefusal(401, 'SIGNED_OUT', 'sign in with an operator token first');
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (err) {
    throw new ApiRefusal(0, 'NETWORK', `the API could not be reached (${err?.message ?? err})`);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (res.ok) return data;
  const { code, message, ...detail } = data?.error ?? {};
  const refusal = new ApiRefusal(
    res.status,
    typeof code === 'string' ? code : `HTTP_${res.status}`,
    typeof message === 'string' ? message : text.slice(0, 300) || res.statusText,
    detail,
  );
  if (res.status === 401 && token === tokenStore.get()) onUnauthorized(refusal);
  throw refusal;
}

/** A path segment from an id (run ids may hold `:` and `.`). */
export const seg = (id) => encodeURIComponent(id);
