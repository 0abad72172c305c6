import { LookupCache, type LookupCacheOptions } from './lookup-cache';

/**
 * Who wrote a message (name and avatar), asked of the network once per user and kept a few minutes (see
 * lookup-cache.ts): the listener's messages carry a display name but never an avatar, and a customer writing ten
 * messages in a minute needs one lookup, not ten.
 */
export interface SenderProfile {
  displayName: string;
  avatarUrl: string;
}

export type SenderProfilesOptions = Omit<LookupCacheOptions<SenderProfile>, 'what'>;

export class SenderProfiles {
  private readonly cache: LookupCache<SenderProfile>;

  constructor(o: SenderProfilesOptions) {
    this.cache = new LookupCache({ ...o, what: 'user info' }, 10_000);
  }

  /** The user's profile, or undefined when the network cannot say now. Callers waiting together share one lookup. */
  profile(uid: string): Promise<SenderProfile | undefined> {
    return this.cache.get(uid);
  }
}
