// The page's way to the API server: every request goes to the console's proxy
// (/api/kubernetes/…) with the signed-in user's bearer token, kept in this tab's sessionStorage
// (gone when the tab closes; never in a cookie, so no other site can send it). An error is the
// API's own Status message, which the pages show as it is.

const TOKEN_KEY = 'bosun-console-token';

export const session = {
  token: (): string | undefined => sessionStorage.getItem(TOKEN_KEY) ?? undefined,
  signIn: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** An answer that was not a success: the HTTP code, the Status's reason and message. */
export class ApiError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) {
    super(message);
  }
  get forbidden(): boolean {
    return this.code === 403;
  }
}

/** The Status message of a failed response, or the body's first line. */
export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const status = JSON.parse(text) as { message?: string; reason?: string; error?: string };
    return new ApiError(response.status, status.reason ?? '', status.message ?? status.error ?? text);
  } catch {
    return new ApiError(response.status, response.statusText, text.split('\n')[0] || `${response.status} ${response.statusText}`);
  }
}

/** Listeners told when the token stops working (401): the page goes back to its login form. */
const unauthorised = new Set<() => void>();
export const onUnauthorised = (listener: () => void): (() => void) => {
  unauthorised.add(listener);
  return () => unauthorised.delete(listener);
};

export async function call(path: string, init: RequestInit & { base?: string } = {}): Promise<Response> {
  const token = session.token();
  const headers = new Headers(init.headers);
  if (token) headers.set('Authorization', `Bearer ${token}`);
  if (!headers.has('Accept')) headers.set('Accept', 'application/json');
  const response = await fetch(`${init.base ?? '/api/kubernetes'}${path}`, { ...init, headers });
  if (response.status === 401) for (const listener of unauthorised) listener();
  return response;
}

export async function getJSON<T>(path: string, base?: string): Promise<T> {
  const response = await call(path, { base });
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** A JSON merge patch (what every action of the console is). */
export async function mergePatch<T>(path: string, patch: unknown): Promise<T> {
  const response = await call(path, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(patch) });
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** Creates an object at a collection path (POST); the API's Status message on failure. */
export async function create<T>(path: string, object: unknown): Promise<T> {
  const response = await call(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(object) });
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** Who the API server says the token belongs to (a SelfSubjectReview). */
export async function whoAmI(): Promise<{ username: string; groups: string[] }> {
  const response = await call('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
  });
  if (!response.ok) throw await errorOf(response);
  const review = (await response.json()) as { status?: { userInfo?: { username?: string; groups?: string[] } } };
  return { username: review.status?.userInfo?.username ?? '(unknown)', groups: review.status?.userInfo?.groups ?? [] };
}
