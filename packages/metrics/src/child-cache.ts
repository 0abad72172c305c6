/**
 * Children of a labelled instrument, looked up by their values joined into one string. prom-client finds a child
 * by hashing a sorted label object on every call; this is one Map lookup, which matters on the gateway's request
 * path. The label sets are bounded (route templates, status codes), so the map is too.
 */
export class ChildCache<T> {
  private readonly children = new Map<string, T>();

  constructor(private readonly make: (...values: string[]) => T) {}

  get(...values: string[]): T {
    const key = values.join('\u0000');
    let child = this.children.get(key);
    if (!child) this.children.set(key, (child = this.make(...values)));
    return child;
  }
}
