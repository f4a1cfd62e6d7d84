// The REST API client (docs/api.md). Every /api/ call carries the bearer
// token kept in sessionStorage; a 401 drops the token and sends the user back
// to the sign-in screen.

const TOKEN_KEY = 'corral.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;  // HTTP status; 0 when corrald could not be reached.
    this.code = code;      // InvalidArgument, NotFound, FailedPrecondition, ...
  }
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

let unauthenticated = () => {};

// `fn(message)` runs when corrald answers 401.
export function onUnauthenticated(fn) {
  unauthenticated = fn;
}

// Sends one request; resolves with the JSON answer, or throws ApiError with
// the message corrald gave.
export async function api(method, path, body, {token} = {}) {
  const headers = {Authorization: `Bearer ${token ?? getToken()}`};
  const init = {method, headers, cache: 'no-store'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'Unavailable', `cannot reach corrald: ${e.message}`);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (e) {
    data = null;
  }
  if (!res.ok) {
    const err = data && data.error ? data.error
      : {code: `HTTP ${res.status}`, message: `${res.status} ${res.statusText}: ${text.slice(0, 200)}`};
    const error = new ApiError(res.status, err.code, err.message);
    if (res.status === 401 && token === undefined) unauthenticated(error.message);
    throw error;
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body) => api('POST', path, body === undefined ? {} : body);
export const del = (path) => api('DELETE', path);

// "/api/v1/clusters/NAME/part/part" with every part URL-encoded.
export function clusterPath(name, ...parts) {
  return ['/api/v1/clusters', name, ...parts].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join('/');
}

// "?a=1&b=2" from the non-empty values of `params` ('' when there are none).
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
