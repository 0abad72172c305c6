import { invalid } from '@crm/grpc-kit';

// The ai service's contract rules: the gateway's schemas are built from these, and ai applies the same ones to a
// caller that does not come through the gateway. The quota's cap (AI_DAILY_QUOTA_MAX, ai's config) and the base
// URL's address policy (ai's resolver) stay in ai.

export const PROVIDER_IDS = ['anthropic', 'gemini', 'openai', 'qwen', 'kimi'] as const;
/** The `local` engine is not a provider: it needs no key and never leaves the process. */
export const LOCAL_ENGINE = 'local';
export const ENGINES = [LOCAL_ENGINE, ...PROVIDER_IDS] as const;
export const ENGINE_MESSAGE = `must be one of ${ENGINES.join(', ')}`;

export const TONES = ['friendly', 'formal', 'concise', 'apologetic'] as const;

export const MAX_SENTIMENT_TEXT = 10_000;

/** The smallest daily quota; the largest is the server's cap, which only ai knows. */
export const DAILY_QUOTA_MESSAGE = 'must be a whole number of at least 1';

export const MODEL_PATTERN = /^[\w.:/@+-]{1,200}$/;
export const MODEL_MESSAGE = 'must be a model name (letters, digits and . _ - : / @ +; at most 200 characters)';

export const API_KEY_MAX = 1000;
const KEY_CHARS = /^[\x21-\x7e]+$/;
export const BASE_URL_MAX = 500;

/** A model name as stored: trimmed; "" means the provider's default. */
export function aiModel(value: string): string {
  const model = value.trim();
  if (model && !MODEL_PATTERN.test(model)) throw invalid('model', MODEL_MESSAGE);
  return model;
}

/** At least 1 and a whole number; `cap` (ai's config) bounds it from above when known. */
export function dailyQuota(value: number, cap?: number): number {
  if (!Number.isInteger(value) || value < 1) throw invalid('dailyQuota', DAILY_QUOTA_MESSAGE);
  if (cap !== undefined && value > cap) throw invalid('dailyQuota', `must be an integer from 1 to ${cap} (the server's cap)`);
  return value;
}

/** A key as stored: trimmed; "" removes it. */
export function apiKey(value: string): string {
  const key = value.trim();
  if (key.length > API_KEY_MAX) throw invalid('apiKey', `must be at most ${API_KEY_MAX} characters`);
  if (key && !KEY_CHARS.test(key)) throw invalid('apiKey', 'must be printable characters without spaces');
  return key;
}

/** An http(s) URL without credentials, query or fragment, normalised without trailing slashes; "" clears it. */
export function baseUrl(raw: string, field = 'baseUrl'): string {
  const value = raw.trim();
  if (value === '') return '';
  if (value.length > BASE_URL_MAX) throw invalid(field, `must be at most ${BASE_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, 'must be an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(field, 'must be an http(s) URL');
  if (url.username || url.password) throw invalid(field, 'must not contain credentials; set the key in apiKey');
  if (url.search || url.hash) throw invalid(field, 'must not contain a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

export * from './guardrails';
