import type { Client } from './http';

/**
 * Follow a public list's nextCursor to the end: the ids of each page. `between` runs after each page (to change
 * records while an integrator pages). Fails on a page that is not 200 or a cursor loop.
 */
export async function pageThrough(
  api: Client,
  path: string,
  key: string,
  between: (pageIndex: number) => Promise<void> = async () => undefined,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const res: { status: number; body: any } = await api.get(cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining([key, 'nextCursor']));
    pages.push(res.body[key].map((r: { id: string }) => r.id));
    cursor = res.body.nextCursor;
    if (pages.length > 100) throw new Error(`${path}: more than 100 pages`);
    await between(pages.length - 1);
  } while (cursor !== null);
  return pages;
}

/** base64url of a JSON value: a hand-made (tampered) cursor. */
export const forgedCursor = (body: unknown) => Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');

/** The decoded body of a cursor (tests only: integrators treat it as opaque). */
export const cursorBody = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
