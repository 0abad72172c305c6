import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { inSequence } from './in-sequence';

/** Runs the sequence on a dummy request; resolves with what reached the outer `next`. */
function run(handlers: RequestHandler[]): Promise<{ err?: unknown }> {
  return new Promise((resolve) => inSequence(...handlers)({} as Request, {} as Response, ((err?: unknown) => resolve({ err })) as NextFunction));
}

describe('inSequence', () => {
  it('runs the handlers in order, then the next layer', async () => {
    const seen: number[] = [];
    const h =
      (n: number): RequestHandler =>
      (_req, _res, next) => {
        seen.push(n);
        next();
      };
    expect(await run([h(1), h(2), h(3)])).toEqual({ err: undefined });
    expect(seen).toEqual([1, 2, 3]);
  });

  it('an error passed on, thrown, or a rejected promise skips the rest and goes to the error handler', async () => {
    const never: RequestHandler = () => {
      throw new Error('must not run');
    };
    const passed = new Error('passed');
    const thrown = new Error('thrown');
    const rejected = new Error('rejected');
    expect((await run([(_q, _s, next) => next(passed), never])).err).toBe(passed);
    expect(
      (
        await run([
          () => {
            throw thrown;
          },
          never,
        ])
      ).err,
    ).toBe(thrown);
    expect(
      (
        await run([
          async () => {
            throw rejected;
          },
          never,
        ])
      ).err,
    ).toBe(rejected);
  });

  it('a handler that answers without calling next ends the request there', async () => {
    let outer = false;
    const after = jest.fn();
    inSequence((_q, _s, _n) => undefined, after)({} as Request, {} as Response, () => (outer = true));
    await new Promise((r) => setImmediate(r));
    expect(after).not.toHaveBeenCalled();
    expect(outer).toBe(false);
  });
});
