import type { z } from 'zod';
import type { ai } from '@crm/proto-types';
import type { AiConfig as AiConfigSchema, ModelList as ModelListSchema } from './ai.schemas';
import { orNull } from '../http/shape';

type AiConfig = ai.AiConfig__Output;
type ModelList = ai.ModelList__Output;

/** The assistant's configuration: no model chosen (the provider's default) is null. */
export function aiConfigOut(c: AiConfig): z.input<typeof AiConfigSchema> {
  return {
    provider: c.provider,
    model: orNull(c.model),
    dailyQuota: c.dailyQuota,
    enabled: c.enabled,
    status: c.status,
    statusMessage: c.statusMessage,
    engine: c.engine,
    effectiveModel: c.effectiveModel,
    usedToday: c.usedToday,
    remainingToday: c.remainingToday,
    quotaResetsAt: c.quotaResetsAt,
    ...(c.updatedAt !== undefined ? { updatedAt: c.updatedAt } : {}),
    fallbackProviders: c.fallbackProviders,
    autoReply: c.autoReply
      ? {
          enabled: c.autoReply.enabled,
          chatnetAccountIds: c.autoReply.chatnetAccountIds,
          minConfidence: c.autoReply.minConfidence,
          onlyOutsideBusinessHours: c.autoReply.onlyOutsideBusinessHours,
          maxRepliesPerConversation: c.autoReply.maxRepliesPerConversation,
        }
      : null,
  };
}

/** A provider's models; `error` only when the vendor could not be asked (the list is then the known defaults). */
export function modelsOut(m: ModelList): z.input<typeof ModelListSchema> {
  const models = m.models.map((x) => ({ title: x.title, value: x.value }));
  return m.error === undefined ? { models } : { models, error: m.error };
}
