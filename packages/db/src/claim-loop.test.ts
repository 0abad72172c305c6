import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { type ClaimBatch, ClaimLoop, type ClaimLoopOptions } from './claim-loop';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const silent = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(10);
  }
}

/** A deferred: work that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('ClaimLoop', () => {
  const loops: ClaimLoop<unknown>[] = [];
  const channel = () => `claim_loop_test_${randomBytes(4).toString('hex')}`;
  const make = <T>(o: Partial<ClaimLoopOptions<T>> & Pick<ClaimLoopOptions<T>, 'claim' | 'work'>) => {
    const loop = new ClaimLoop<T>({ name: 'test loop', databaseUrl, channel: channel(), pollMs: 60_000, concurrency: 2, log: silent, ...o });
    loops.push(loop as ClaimLoop<unknown>);
    return loop;
  };
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop()));
  });

  it('a plain list: claims on start, again at once while every slot was filled, and again whenever an item finishes', async () => {
    const queue = [1, 2, 3, 4, 5];
    const claims: number[] = [];
    const done: number[] = [];
    const loop = make<number>({
      concurrency: 2,
      claim: async (free) => {
        claims.push(free);
        return queue.splice(0, free);
      },
      work: async (n) => {
        done.push(n);
      },
    });
    await loop.start();
    await waitFor(() => done.length === 5);
    await sleep(50);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5]);
    // Every finish looked again, so the last claims found nothing.
    expect(claims.length).toBeGreaterThan(3);
  });

  it('a ClaimBatch: `left: false` means a finished item does not claim again; `again` comes round at once with due=false', async () => {
    const calls: { free: number; due: boolean }[] = [];
    let answers: ClaimBatch<string>[] = [
      { items: ['a'], again: true, left: false },
      { items: ['b'], again: false, left: false },
    ];
    const done: string[] = [];
    const loop = make<string>({
      concurrency: 3,
      claim: async (free, due) => {
        calls.push({ free, due });
        return answers.shift() ?? { items: [], again: false, left: false };
      },
      work: async (s) => {
        done.push(s);
      },
    });
    await loop.start();
    await waitFor(() => done.length === 2);
    await sleep(100);
    // start (due), then `again` (not due); the connect's wake-up may add one more due look.
    expect(calls[0]).toEqual({ free: 3, due: true });
    expect(calls.filter((c) => !c.due)).toHaveLength(1);
    const before = calls.length;
    // Nothing left and nothing asked: finished items do not claim.
    await sleep(100);
    expect(calls.length).toBe(before);
    // wake() asks for a look at the table; nudge() only comes round.
    answers = [{ items: [], again: false, left: false }];
    loop.wake();
    await waitFor(() => calls.length === before + 1);
    expect(calls.at(-1)).toEqual({ free: 3, due: true });
    loop.nudge();
    await waitFor(() => calls.length === before + 2);
    expect(calls.at(-1)).toEqual({ free: 3, due: false });
  });

  it('a ClaimBatch with `left: true`: the loop claims again when a slot frees', async () => {
    const work = [gate(), gate()];
    let claims = 0;
    const loop = make<number>({
      concurrency: 1,
      claim: async () => {
        claims += 1;
        return claims <= 2 ? { items: [claims - 1], again: false, left: true } : { items: [], again: false, left: false };
      },
      work: (i) => work[i].opened,
    });
    await loop.start();
    await waitFor(() => claims >= 1);
    await sleep(50);
    expect(claims).toBe(1);
    work[0].open();
    await waitFor(() => claims === 2);
    work[1].open();
    await waitFor(() => claims === 3);
  });

  it('a payload handler gets each NOTIFY payload and the loop comes round without a due look; a plain channel wakes with due', async () => {
    const withPayload = channel();
    const payloads: string[] = [];
    const calls: boolean[] = [];
    const loop = make<never>({
      channel: withPayload,
      onNotification: (p) => payloads.push(p),
      claim: async (_free, due) => (calls.push(due), []),
      work: async () => undefined,
    });
    const plain = channel();
    const plainCalls: boolean[] = [];
    const other = make<never>({ channel: plain, claim: async (_free, due) => (plainCalls.push(due), []), work: async () => undefined });
    await loop.start();
    await other.start();
    expect(loop.listening).toBe(true);
    await sleep(100);
    const [n, m] = [calls.length, plainCalls.length];
    const c = new Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      await c.query(`SELECT pg_notify($1, 'id-1,id-2'), pg_notify($2, '')`, [withPayload, plain]);
    } finally {
      await c.end();
    }
    await waitFor(() => payloads.length === 1 && calls.length === n + 1 && plainCalls.length === m + 1);
    expect(payloads).toEqual(['id-1,id-2']);
    expect(calls.at(-1)).toBe(false);
    expect(plainCalls.at(-1)).toBe(true);
  });

  it('starts without its LISTEN connection (the poll finds the work); stop() waits for a claim under way and what it took', async () => {
    const claiming = gate();
    let claimed = false;
    let worked = false;
    const loop = make<number>({
      databaseUrl: 'postgres://postgres@127.0.0.1:1/none',
      pollMs: 20,
      claim: async () => {
        if (claimed) return [];
        claimed = true;
        await claiming.opened;
        return [1];
      },
      work: async () => {
        await sleep(20);
        worked = true;
      },
    });
    await loop.start();
    expect(loop.listening).toBe(false);
    await waitFor(() => claimed);
    const stopped = loop.stop();
    claiming.open();
    await stopped;
    // What the claim under way took is worked and waited for (left alone it would wait out its lease).
    expect(worked).toBe(true);
  });

  it('adopt: items taken outside a claim share the slots, never beside a claim, and are worked at once', async () => {
    const claiming = gate();
    const events: string[] = [];
    const finish = gate();
    let claims = 0;
    const loop = make<string>({
      concurrency: 3,
      claim: async (free) => {
        claims++;
        events.push(`claim ${free}`);
        if (claims === 1) {
          await claiming.opened;
          return { items: ['c1'], again: false, left: false };
        }
        return { items: [], again: false, left: false };
      },
      work: async (s) => {
        events.push(`work ${s}`);
        await finish.opened;
      },
    });
    await loop.start();
    await waitFor(() => claims === 1);
    // Asked while the first claim is under way: waits for it, then sees the slot that claim took.
    const adopted = loop.adopt(async (free) => {
      events.push(`adopt ${free}`);
      return ['a1', 'a2'];
    });
    await sleep(30);
    expect(events).toEqual(['claim 3']);
    claiming.open();
    await adopted;
    expect(events.slice(0, 4)).toEqual(['claim 3', 'work c1', 'adopt 2', 'work a1']);
    expect(events).toContain('work a2');
    expect(loop.busy).toBe(3);
    // Every slot taken: the next adoption is offered none.
    let offered = -1;
    await loop.adopt(async (free) => {
      offered = free;
      return [];
    });
    expect(offered).toBe(0);
    finish.open();
    await waitFor(() => loop.busy === 0);
  });

  it('adopt: an error of take rejects the adoption and the loop goes on claiming', async () => {
    let claims = 0;
    const loop = make<number>({
      claim: async () => {
        claims++;
        return [];
      },
      work: async () => undefined,
    });
    await loop.start();
    await expect(loop.adopt(async () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    const before = claims;
    loop.wake();
    await waitFor(() => claims > before);
    let offered = -1;
    await loop.adopt(async (free) => {
      offered = free;
      return [];
    });
    expect(offered).toBe(2);
  });
});
