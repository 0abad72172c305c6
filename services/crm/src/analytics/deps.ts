import type { Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { OpenTimeSource } from '../clients';
import type { TeamDirectory } from './team-directory';

/** What the analytics endpoints need. */
export interface AnalyticsDeps {
  pool: Pool;
  log: Logger;
  team: TeamDirectory;
  openTime: OpenTimeSource;
}
