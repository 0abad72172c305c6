import { Batcher } from './batcher';

describe('Batcher (group commit)', () => {
  it('flushes a lone call at once and groups the calls that arrive during a flush', async () => {
    const flushed: number[][] = [];
    let release!: () => void;
    const b = new Batcher<number>(async (items) => {
      flushed.push(items);
      if (flushed.length === 1) await new Promise<void>((r) => (release = r));
    });
    const first = b.add(1);
    await new Promise((r) => setImmediate(r));
    const later = [b.add(2), b.add(3), b.add(4)];
    release();
    await Promise.all([first, ...later]);
    expect(flushed).toEqual([[1], [2, 3, 4]]);
  });

  it('fails every call of a failed flush, and goes on with the next', async () => {
    let n = 0;
    const b = new Batcher<string>(async () => {
      if (n++ === 0) throw new Error('database down');
    });
    await expect(Promise.all([b.add('a'), b.add('b')])).rejects.toThrow('database down');
    await expect(b.add('c')).resolves.toBeUndefined();
  });

  it('caps the size of one flush', async () => {
    const sizes: number[] = [];
    const b = new Batcher<number>(async (items) => void sizes.push(items.length), 2);
    await Promise.all([1, 2, 3, 4, 5].map((i) => b.add(i)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('with gatherMs, waits that long for other calls before the first flush', async () => {
    // Fake timers: on a loaded machine a real 10 ms sleep can outlast the 30 ms gather (CI flake).
    jest.useFakeTimers();
    try {
      const flushed: number[][] = [];
      const b = new Batcher<number>(async (items) => void flushed.push(items), 500, 30);
      const first = b.add(1);
      await jest.advanceTimersByTimeAsync(29);
      expect(flushed).toEqual([]);
      const second = b.add(2);
      await jest.advanceTimersByTimeAsync(1);
      await Promise.all([first, second]);
      expect(flushed).toEqual([[1, 2]]);
    } finally {
      jest.useRealTimers();
    }
  });
});
