import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for a Graph-API-style social network: /me/accounts (user token), /{page}/leadgen_forms
 * and /{form}/leads (page token) with cursor paging, and a queue of canned failures to answer next.
 */
export interface FakeLead {
  id: string;
  created_time: string;
  field_data: { name: string; values: string[] }[];
}
export interface FakePage {
  id: string;
  name: string;
  followers_count: number;
  access_token: string;
  forms: { id: string; name: string; leads: FakeLead[] }[];
}

export async function startFakeGraph(version = 'v19.0') {
  const state = {
    userToken: 'fake-user-token-0001',
    pages: [] as FakePage[],
    /** Answered (in order) instead of the next requests whose path matches (any path without `match`). */
    failures: [] as { status: number; body: unknown; headers?: Record<string, string>; match?: RegExp }[],
    /** Every request's path and Authorization header, to check how tokens travel. */
    requests: [] as { url: string; authorization: string }[],
  };

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const denied = (res: http.ServerResponse) =>
    send(res, 400, { error: { message: 'Error validating access token', type: 'OAuthException', code: 190 } });
  /** One page of a listing: `after` is the offset as text, as opaque to the client as a real cursor. */
  const paged = <T>(url: URL, items: T[], base: string) => {
    const limit = Math.max(1, Number(url.searchParams.get('limit') ?? 25));
    const start = Number(url.searchParams.get('after') ?? 0);
    const data = items.slice(start, start + limit);
    const end = start + data.length;
    const more = end < items.length;
    return {
      data,
      paging: { cursors: { before: String(start), after: String(end) }, ...(more ? { next: `${base}${url.pathname}?after=${end}` } : {}) },
    };
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const authorization = req.headers.authorization ?? '';
    state.requests.push({ url: req.url ?? '', authorization });
    const i = state.failures.findIndex((f) => !f.match || f.match.test(url.pathname));
    if (i >= 0) {
      const [failure] = state.failures.splice(i, 1);
      return send(res, failure.status, failure.body, failure.headers);
    }
    const token = authorization.replace(/^Bearer /, '');
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== version || parts.length !== 3) return send(res, 404, { error: { message: 'Unknown path', code: 803 } });
    const base = `http://${req.headers.host}`;
    if (parts[1] === 'me' && parts[2] === 'accounts') {
      if (token !== state.userToken) return denied(res);
      return send(
        res,
        200,
        paged(
          url,
          state.pages.map(({ forms: _forms, ...p }) => p),
          base,
        ),
      );
    }
    if (parts[2] === 'leadgen_forms') {
      const page = state.pages.find((p) => p.id === parts[1]);
      if (!page) return send(res, 404, { error: { message: 'Unknown page', code: 803 } });
      if (token !== page.access_token) return denied(res);
      return send(
        res,
        200,
        paged(
          url,
          page.forms.map((f) => ({ id: f.id, name: f.name, leads_count: f.leads.length })),
          base,
        ),
      );
    }
    if (parts[2] === 'leads') {
      const page = state.pages.find((p) => p.forms.some((f) => f.id === parts[1]));
      if (!page) return send(res, 404, { error: { message: 'Unknown form', code: 803 } });
      if (token !== page.access_token) return denied(res);
      return send(res, 200, paged(url, page.forms.find((f) => f.id === parts[1])!.leads, base));
    }
    return send(res, 404, { error: { message: 'Unknown path', code: 803 } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    baseUrl: `http://127.0.0.1:${port}/${version}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A lead as the network sends it: answers in field_data. */
export function fakeLead(id: string, answers: Record<string, string>): FakeLead {
  return { id, created_time: '2024-05-01T08:00:00+0000', field_data: Object.entries(answers).map(([name, v]) => ({ name, values: [v] })) };
}
