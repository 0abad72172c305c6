import type { RequestHandler } from 'express';
import helmet from 'helmet';

type Recorded = { set: [string, string][]; removed: string[] };

/** What helmet's defaults do to one response, recorded. */
function record(): Recorded {
  const out: Recorded = { set: [], removed: [] };
  const recorder = {
    setHeader: (name: string, value: unknown) => out.set.push([name, String(value)]),
    removeHeader: (name: string) => out.removed.push(name),
  };
  let done = false;
  helmet()({} as never, recorder as never, (err?: unknown) => {
    if (err) throw err;
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously');
  return out;
}

/**
 * helmet()'s default headers (CSP, HSTS, X-Frame-Options, …), worked out once at start-up and set by one loop
 * per response. With its defaults every value is a constant (no nonce, nothing read from the request); running
 * helmet itself walked twelve middleware functions per request to set them. Recorded twice and compared, so a
 * helmet whose defaults ever depend on the call is refused at start-up rather than frozen.
 */
export function securityHeaders(): RequestHandler {
  const headers = record();
  if (JSON.stringify(headers) !== JSON.stringify(record())) throw new Error("helmet's default headers vary between responses");
  const { set, removed } = headers;
  return (_req, res, next) => {
    for (let i = 0; i < set.length; i++) res.setHeader(set[i][0], set[i][1]);
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]);
    next();
  };
}
