/**
 * The methods of a generated definition, without the `[name: string]` signature it inherits from grpc-js. Its
 * own file because both typed.ts (handlers, clients) and org-free.ts (the org-free list) need it, and typed.ts
 * needs org-free.ts: kept in either, the two would import each other.
 */
export type MethodsOf<S> = { [M in keyof S as string extends M ? never : number extends M ? never : M]: S[M] };
