import type { Queryable } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { aiRules } from '@crm/validation';
import type { Deps } from '../deps';
import * as repo from '../db/guard-settings.repo';
import { isProviderId, type ProviderId } from '../providers/catalog';

/** Guarded auto-reply (issue #32 item 5): which accounts' customers get AI answers, and the limits. */
export interface AutoReplySettings {
  enabled: boolean;
  chatnetAccountIds: string[];
  minConfidence: number;
  onlyOutsideBusinessHours: boolean;
  maxRepliesPerConversation: number;
}

export interface GuardSettings {
  /** Tried in order after the chosen provider fails or times out; the offline engine answers last. */
  fallbackProviders: ProviderId[];
  autoReply: AutoReplySettings;
}

/** The defaults of an organization that has not chosen (migration 003's column defaults). */
export const DEFAULT_GUARD: GuardSettings = {
  fallbackProviders: [],
  autoReply: { enabled: false, chatnetAccountIds: [], minConfidence: 0.7, onlyOutsideBusinessHours: false, maxRepliesPerConversation: 3 },
};

/** Only sent fields change (proto: a list's presence is its wrapper's). */
export interface GuardUpdate {
  fallbackProviders?: { values?: string[] } | null;
  autoReply?: {
    enabled?: boolean;
    chatnetAccountIds?: { values?: string[] } | null;
    minConfidence?: number;
    onlyOutsideBusinessHours?: boolean;
    maxRepliesPerConversation?: number;
  } | null;
}

function fromRow(r: repo.GuardSettingsRow | undefined): GuardSettings {
  if (!r) return DEFAULT_GUARD;
  return {
    // A provider id dropped from the catalogue since it was saved is passed over.
    fallbackProviders: r.fallback_providers.filter(isProviderId),
    autoReply: {
      enabled: r.auto_reply_enabled,
      chatnetAccountIds: r.auto_reply_account_ids,
      // real: kept to the two decimals an admin types.
      minConfidence: Math.round(r.auto_reply_min_confidence * 1000) / 1000,
      onlyOutsideBusinessHours: r.auto_reply_outside_hours_only,
      maxRepliesPerConversation: r.auto_reply_max_replies,
    },
  };
}

export async function guardSettingsOf(deps: Deps, orgId: string): Promise<GuardSettings> {
  return fromRow(await repo.find(deps.pool, orgId));
}

export async function fallbackProvidersOf(deps: Deps, orgId: string): Promise<ProviderId[]> {
  return (await guardSettingsOf(deps, orgId)).fallbackProviders;
}

/** The settings after `req`, validated with the gateway's rules (400 naming `fallbackProviders.1`, `autoReply.minConfidence`). */
export function nextGuardSettings(current: GuardSettings, req: GuardUpdate): GuardSettings {
  const next: GuardSettings = { fallbackProviders: current.fallbackProviders, autoReply: { ...current.autoReply } };
  if (req.fallbackProviders) next.fallbackProviders = aiRules.fallbackProviders(req.fallbackProviders.values ?? []) as ProviderId[];
  const a = req.autoReply;
  if (a) {
    if (a.enabled !== undefined && a.enabled !== null) next.autoReply.enabled = a.enabled;
    if (a.chatnetAccountIds) next.autoReply.chatnetAccountIds = aiRules.autoReplyAccountIds(a.chatnetAccountIds.values ?? []);
    if (a.minConfidence !== undefined && a.minConfidence !== null) next.autoReply.minConfidence = aiRules.autoReplyMinConfidence(a.minConfidence);
    if (a.onlyOutsideBusinessHours !== undefined && a.onlyOutsideBusinessHours !== null)
      next.autoReply.onlyOutsideBusinessHours = a.onlyOutsideBusinessHours;
    if (a.maxRepliesPerConversation !== undefined && a.maxRepliesPerConversation !== null)
      next.autoReply.maxRepliesPerConversation = aiRules.autoReplyMaxReplies(a.maxRepliesPerConversation);
  }
  return next;
}

/** Each guard setting that changed, from/to (for the audit entry of the settings change). */
export function guardChanges(before: GuardSettings, after: GuardSettings): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  if (JSON.stringify(before.fallbackProviders) !== JSON.stringify(after.fallbackProviders))
    changes.fallbackProviders = { from: before.fallbackProviders, to: after.fallbackProviders };
  if (JSON.stringify(before.autoReply) !== JSON.stringify(after.autoReply)) changes.autoReply = { from: before.autoReply, to: after.autoReply };
  return changes;
}

/**
 * Saved in the settings change's transaction. messaging keeps the auto-reply accounts in memory (so a customer's
 * message on any other account costs it nothing): a change reaches it as `ai.auto_reply_changed`, committed with it, in
 * the trace of the call that changed it (`traceparent`).
 */
export async function saveGuardSettings(
  db: Queryable,
  orgId: string,
  userId: string | null,
  before: GuardSettings,
  next: GuardSettings,
  traceparent: string | undefined,
) {
  const changes = guardChanges(before, next);
  if (Object.keys(changes).length === 0) return changes;
  const row = await repo.save(db, {
    orgId,
    fallbackProviders: next.fallbackProviders,
    enabled: next.autoReply.enabled,
    accountIds: next.autoReply.chatnetAccountIds,
    minConfidence: next.autoReply.minConfidence,
    outsideHoursOnly: next.autoReply.onlyOutsideBusinessHours,
    maxReplies: next.autoReply.maxRepliesPerConversation,
    userId,
  });
  if (changes.autoReply) {
    await enqueueEvent(db, {
      type: 'ai.auto_reply_changed',
      orgId,
      data: { ...next.autoReply, updatedAt: row.updated_at.toISOString() },
      traceparent,
    });
  }
  return changes;
}
