/** A small HTTP client for tests: JSON in, `{status, body, headers}` out, never throws on 4xx/5xx. */
export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(baseUrl: string, defaults: Record<string, string> = {}) {
  const call = async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res<T>> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...defaults, ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
  return {
    get: <T = any>(p: string, h?: Record<string, string>) => call<T>('GET', p, undefined, h),
    post: <T = any>(p: string, b?: unknown, h?: Record<string, string>) => call<T>('POST', p, b ?? {}, h),
    put: <T = any>(p: string, b?: unknown, h?: Record<string, string>) => call<T>('PUT', p, b ?? {}, h),
    del: <T = any>(p: string, h?: Record<string, string>) => call<T>('DELETE', p, undefined, h),
    /** The same client with a bearer token or API key on every call. */
    as: (token: string) => client(baseUrl, { ...defaults, authorization: `Bearer ${token}` }),
    withKey: (key: string) => client(baseUrl, { ...defaults, 'x-api-key': key }),
  };
}

export type Client = ReturnType<typeof client>;

let counter = 0;
/** A unique email per call, so tests never collide on the global email uniqueness. */
export function email(name = 'user'): string {
  return `${name}.${Date.now().toString(36)}.${++counter}@example.test`;
}

/** Create an organization through sign-up and return its owner's client. */
export async function newOrg(api: Client, orgName = 'Acme') {
  const ownerEmail = email('owner');
  const res = await api.post('/api/v1/auth/signup', { orgName, fullName: 'Olive Owner', email: ownerEmail, password: 'correct horse battery' });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    owner: api.as(res.body.token),
    token: res.body.token as string,
    user: res.body.user,
    email: ownerEmail,
    refreshToken: res.body.refreshToken as string,
  };
}
