import { LookupCache, type LookupCacheOptions } from './lookup-cache';

/**
 * The names of the groups a session sees, asked of the network once per group and kept a few minutes (see
 * lookup-cache.ts): a rename shows within `ttlMs`, and a message never waits long for its group's name.
 */
export type GroupNamesOptions = Omit<LookupCacheOptions<string>, 'what'>;

export class GroupNames {
  private readonly cache: LookupCache<string>;

  constructor(o: GroupNamesOptions) {
    this.cache = new LookupCache({ ...o, what: 'group info' }, 5_000);
  }

  /** The group's name (blank names count as none), or undefined when the network cannot say now. */
  async name(groupId: string): Promise<string | undefined> {
    return (await this.cache.get(groupId))?.trim() || undefined;
  }
}
