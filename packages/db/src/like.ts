/** A LIKE pattern's literal text: %, _ and the escape character itself are matched as typed (a search for "50%" finds "50%"). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
