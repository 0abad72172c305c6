/**
 * Compile-time: a documented response lists exactly the top-level fields of the mapper that shapes it.
 * `keysMatch<z.infer<typeof Doc>, ReturnType<typeof mapperOut>>(true)` does not compile when they differ.
 */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
export const keysMatch = <A, B>(ok: SameKeys<A, B>) => ok;
