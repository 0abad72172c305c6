import { createHash } from 'node:crypto';
import { traceFields, type OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { ADAPTERS, type ChatPrompt } from '../providers/adapters';
import { isProviderId, LOCAL_ENGINE, PROVIDERS, type ProviderId } from '../providers/catalog';
import { ProviderError } from '../providers/http';
import { connectionOf, resolveForUse } from '../domain/providers';
import { fallbackProvidersOf } from './guard-settings';
import { PiiVault, PLACEHOLDER_NOTE, redact, restore } from './pii';

/** Which engine answered, and why not the one chosen when another did. */
export interface EngineAnswered {
  /** The provider id that answered, or `local` (the offline engine). */
  engine: string;
  model: string;
  /** Present when a configured provider could not answer: each one tried and why, then who answered. */
  fallbackReason?: string;
  /** SHA-256 (hex) of the prompt as it left (or would have left) for a provider: placeholders, never the personal data. */
  promptHash: string;
}

/** A prompt made safe to leave: personal data replaced (AI_REDACT_PII), and the vault to put it back. */
function guardedPrompt(deps: Deps, prompt: ChatPrompt): { prompt: ChatPrompt; vault: PiiVault } {
  const vault = new PiiVault();
  if (!deps.config.AI_REDACT_PII) return { prompt, vault };
  const user = redact(prompt.user, vault);
  const system = redact(prompt.system, vault);
  return { prompt: { ...prompt, system: vault.size > 0 ? `${system} ${PLACEHOLDER_NOTE}` : system, user }, vault };
}

export const promptHashOf = (p: ChatPrompt) => createHash('sha256').update(`${p.system}\n\n${p.user}`).digest('hex');

/**
 * The providers to ask, in order: the chosen one, then the organization's `fallbackProviders` (each once). A
 * provider without a key is passed over with its reason; one that fails or times out hands over to the next; the
 * offline engine answers last (issue #32 item 6). Every call counts its tokens (AI_DAILY_TOKENS_MAX); past the cap no
 * provider is asked.
 */
export async function answerGuarded<T>(
  deps: Deps,
  ctx: OrgContext,
  chosen: string,
  chosenModel: string,
  remote: { prompt: ChatPrompt; parse: (text: string) => T },
  local: () => T,
  localModel: string,
): Promise<T & EngineAnswered> {
  const { prompt, vault } = guardedPrompt(deps, remote.prompt);
  const promptHash = promptHashOf(prompt);
  // Only a missing key (nothing was tried) says "answered"; after a failure the local engine answered "instead".
  let failed = false;
  const offline = (reasons: string[], ending = failed ? 'the local engine answered instead' : 'the local engine answered'): T & EngineAnswered => ({
    ...local(),
    engine: LOCAL_ENGINE,
    model: localModel,
    promptHash,
    ...(reasons.length ? { fallbackReason: `${reasons.join('; ')}; ${ending}` } : {}),
  });
  if (!isProviderId(chosen)) return offline([]);
  const order: ProviderId[] = [chosen, ...(await fallbackProvidersOf(deps, ctx.orgId)).filter((p) => p !== chosen)];
  const reasons: string[] = [];
  for (const id of order) {
    const info = PROVIDERS[id];
    const conn = connectionOf(await resolveForUse(deps, ctx, id));
    if (!conn) {
      reasons.push(id === chosen ? `${info.name} is selected but has no API key` : `${info.name} (fallback) has no API key`);
      continue;
    }
    if (!(await deps.tokens.left(ctx.orgId))) {
      reasons.push(`Today's AI token allowance (AI_DAILY_TOKENS_MAX) is used up`);
      return offline(reasons, 'the local engine answered until 00:00 UTC');
    }
    // The model chosen belongs to the chosen provider; a fallback answers with its own default.
    const model = id === chosen && chosenModel ? chosenModel : info.defaultModel;
    try {
      const { text, tokens } = await ADAPTERS[info.api].complete(conn, model, prompt, deps.config.AI_COMPLETION_TIMEOUT_MS);
      await deps.tokens.add(ctx.orgId, tokens);
      const answer = remote.parse(restore(text, vault));
      const fallbackReason = reasons.length ? `${reasons.join('; ')}; ${info.name} answered instead` : undefined;
      return { ...answer, engine: id, model, promptHash, ...(fallbackReason ? { fallbackReason } : {}) };
    } catch (err) {
      failed = true;
      if (err instanceof ProviderError) {
        deps.log.warn(
          { orgId: ctx.orgId, provider: id, reason: err.reason, status: err.status, requestId: ctx.requestId, ...traceFields(ctx) },
          err.message,
        );
        reasons.push(err.message);
      } else {
        deps.log.error(
          { orgId: ctx.orgId, provider: id, errName: (err as Error)?.name, requestId: ctx.requestId, ...traceFields(ctx) },
          'provider call failed unexpectedly',
        );
        reasons.push(`${info.name} could not be used`);
      }
    }
  }
  return offline(reasons);
}
