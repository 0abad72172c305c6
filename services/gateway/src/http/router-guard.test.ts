import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type Response, Router } from 'express';
import { whenRouted } from './router-guard';
import { routeTable } from './route-table';

/** A router whose entries are recorded under `name`. */
function tracked(name: string, entered: string[], build: (r: Router) => void): Router {
  const r = Router();
  build(r);
  // The router function enters through its `handle` method, which express 5's types do not declare.
  const dispatch = r as unknown as { handle: (req: Request, res: Response, next: NextFunction) => void };
  const handle = dispatch.handle.bind(r);
  dispatch.handle = (req, res, next) => {
    entered.push(name);
    return handle(req, res, next);
  };
  return r;
}

describe('whenRouted', () => {
  const entered: string[] = [];
  let url = '';
  let close: () => void;
  let app: express.Express;

  beforeAll(async () => {
    const nested = Router();
    nested.get('/c', (_req, res) => res.json({ by: 'nested c' }));
    const r1 = tracked('r1', entered, (r) => {
      r.get('/a/:id', (req, res) => res.json({ by: 'r1', id: req.params.id }));
      // Hands on to the next router with the same route.
      r.get('/shared', (_req, _res, next) => next());
      r.get('/broken', (_req, _res, next) => next(new Error('broken in r1')));
    });
    const r2 = tracked('r2', entered, (r) => {
      r.get('/b', (req, res) => res.json({ by: 'r2', baseUrl: req.baseUrl }));
      r.get('/shared', (_req, res) => res.json({ by: 'r2 shared' }));
      r.get('/broken', (_req, res) => res.json({ by: 'r2 broken' }));
    });
    const r3 = tracked('r3', entered, (r) => r.use('/', nested));
    app = express();
    app.use('/x', whenRouted(r1, r2, r3));
    app.use((req, res) => res.status(404).json({ by: 'fallthrough', url: req.url }));
    app.use(((err, _req, res, _next) => res.status(500).json({ error: (err as Error).message })) as ErrorRequestHandler);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());
  beforeEach(() => void entered.splice(0));

  const get = async (path: string) => {
    const res = await fetch(url + path);
    return { status: res.status, body: await res.json() };
  };

  it('enters only the router that has a route for the path, with the mount state a router mounted alone gets', async () => {
    expect(await get('/x/b?q=1')).toEqual({ status: 200, body: { by: 'r2', baseUrl: '/x' } });
    expect(entered).toEqual(['r2']);
    expect(await get('/x/a/42')).toEqual({ status: 200, body: { by: 'r1', id: '42' } });
    expect(entered).toEqual(['r2', 'r1']);
  });

  it('looks into nested routers; matches as express does (case-insensitive, trailing slash)', async () => {
    expect((await get('/x/c')).body).toEqual({ by: 'nested c' });
    expect((await get('/x/B/')).body).toEqual({ by: 'r2', baseUrl: '/x' });
    expect(entered).toEqual(['r3', 'r2']);
  });

  it('a path no router serves enters none and goes on to the next layer with its URL as it was', async () => {
    expect(await get('/x/nothing/here')).toEqual({ status: 404, body: { by: 'fallthrough', url: '/x/nothing/here' } });
    expect(entered).toEqual([]);
  });

  it('routers keep their order: a route that hands on reaches the next router; an error skips the rest', async () => {
    expect((await get('/x/shared')).body).toEqual({ by: 'r2 shared' });
    expect(entered).toEqual(['r1', 'r2']);
    expect(await get('/x/broken')).toEqual({ status: 500, body: { error: 'broken in r1' } });
  });

  it("exposes every router's routes to route-table.ts", () => {
    expect(routeTable(app).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /x/a/:id',
      'GET /x/shared',
      'GET /x/broken',
      'GET /x/b',
      'GET /x/shared',
      'GET /x/broken',
      'GET /x/c',
    ]);
  });
});
