export const CAMPAIGN_STATUSES = ['draft', 'active', 'paused', 'completed', 'cancelled'] as const;
export const RECIPIENT_STATUSES = ['pending', 'sent', 'failed', 'skipped', 'cancelled'] as const;

/** Most characters of each free-text field of a campaign. */
export const CAMPAIGN_TEXT_MAX = { name: 200, description: 2000, subject: 250 } as const;
