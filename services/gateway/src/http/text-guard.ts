import type { RequestHandler } from 'express';
import type { FieldIssue } from '@crm/grpc-kit';
import { badRequest } from './errors';

/**
 * NUL and unpaired UTF-16 surrogates are never meaningful text: PostgreSQL refuses NUL in text columns (an
 * error that used to surface as a 500), and a lone surrogate is silently turned into U+FFFD on its way to
 * UTF-8. They are refused at the edge, for every query value and every JSON body string or key, with a 400
 * naming the field, so no route can forget and no service receives them.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const MESSAGE = 'must not contain NUL characters or unpaired surrogates';
const KEY_MESSAGE = 'must not have keys with NUL characters or unpaired surrogates';
/** Deeper than any schema goes; past it the value is refused by the route's own schema anyway. */
const MAX_DEPTH = 32;

/** Every unsafe string or key in a parsed query or JSON body, named by its path (`tags.1`); `root` names the top. */
export function unsafeTextIssues(value: unknown, root: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  const walk = (v: unknown, field: string, depth: number) => {
    if (typeof v === 'string') {
      if (UNSAFE.test(v)) out.push({ field: field || root, message: MESSAGE });
    } else if (Array.isArray(v)) {
      if (depth < MAX_DEPTH) v.forEach((item, i) => walk(item, field ? `${field}.${i}` : String(i), depth + 1));
    } else if (v !== null && typeof v === 'object' && depth < MAX_DEPTH) {
      for (const [k, item] of Object.entries(v)) {
        if (UNSAFE.test(k)) out.push({ field: field || root, message: KEY_MESSAGE });
        else walk(item, field ? `${field}.${k}` : k, depth + 1);
      }
    }
  };
  walk(value, '', 0);
  return out;
}

/** Mounted once, after the JSON parser and before any route. */
export const rejectUnsafeText: RequestHandler = (req, _res, next) => {
  const issues = [...unsafeTextIssues(req.query, 'query'), ...unsafeTextIssues(req.body, 'body')];
  next(issues.length ? badRequest(issues) : undefined);
};
