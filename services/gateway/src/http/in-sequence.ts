import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware run one after the other as a single layer of the app's router, as the router would run them (an error,
 * thrown or passed to `next` or a rejected promise, goes on to the error handler). Each layer of the router costs a
 * match, a parameter step and its tracing hooks on every request; the handlers every request passes through are
 * grouped so that cost is paid once per group.
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const out: unknown = handler(req, res, step);
        if (out instanceof Promise) out.catch((e: unknown) => step(e ?? new Error('Rejected promise')));
      } catch (e) {
        step(e);
      }
    };
    step();
  };
}
