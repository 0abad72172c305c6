import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every response carries `x-request-id`: the client's own when it sent a sane one, else a new UUID. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.header('x-request-id');
  const id = given && VALID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
};
