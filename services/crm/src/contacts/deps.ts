import type { Pool } from '@crm/db';
import type { GrantKeeper } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConversationSource, UserDirectory } from '../clients';
import type { CrmConfig } from '../config';
import type { ContactWriters } from './contact-writer';
import type { TotalCache } from './db/total-cache';

/**
 * What the contacts module reads of the service's Deps (app.ts passes the whole Deps, which has all of it). Declared
 * here rather than imported from ../deps: deps.ts names ContactWriter and TotalCache from this module, so the module
 * naming deps.ts back would make the two import each other.
 */
export interface ContactsDeps {
  config: CrmConfig;
  pool: Pool;
  log: Logger;
  users: UserDirectory;
  conversations: ConversationSource;
  totals: TotalCache;
  /**
   * Every creation, change and deletion of a contact goes through it (with its activity, event and scoring facts), in
   * the trace of the work it writes for: `deps.contactWriter.inTrace(ctx.traceparent)`.
   */
  contactWriter: ContactWriters;
  /** The gateway's grant per org (RenewGrant, served with this module's CrmService). */
  grants: GrantKeeper;
}
