import { aiRules } from '@crm/validation';
import type { AiServiceConfig } from '../config';

/** The providers' ids are part of the API's contract (the gateway's schemas use the same list). */
export const PROVIDER_IDS = aiRules.PROVIDER_IDS;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** The three wire shapes vendors speak; Qwen (DashScope compatible mode) and Kimi speak OpenAI's. */
export type ApiShape = 'openai' | 'anthropic' | 'gemini';

export interface ProviderInfo {
  id: ProviderId;
  name: string;
  api: ApiShape;
  defaultBaseUrl: string;
  /** Used when the organization picked the provider but no model. */
  defaultModel: string;
  envKey: keyof AiServiceConfig;
  envBaseUrl: keyof AiServiceConfig;
}

export const PROVIDERS: Record<ProviderId, ProviderInfo> = {
  anthropic: {
    id: 'anthropic',
    name: 'Anthropic Claude',
    api: 'anthropic',
    defaultBaseUrl: 'https://api.anthropic.com',
    defaultModel: 'claude-3-5-haiku-latest',
    envKey: 'ANTHROPIC_API_KEY',
    envBaseUrl: 'ANTHROPIC_BASE_URL',
  },
  gemini: {
    id: 'gemini',
    name: 'Google Gemini',
    api: 'gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    defaultModel: 'gemini-2.0-flash',
    envKey: 'GEMINI_API_KEY',
    envBaseUrl: 'GEMINI_BASE_URL',
  },
  openai: {
    id: 'openai',
    name: 'OpenAI',
    api: 'openai',
    defaultBaseUrl: 'https://api.openai.com/v1',
    defaultModel: 'gpt-4o-mini',
    envKey: 'OPENAI_API_KEY',
    envBaseUrl: 'OPENAI_BASE_URL',
  },
  qwen: {
    id: 'qwen',
    name: 'Alibaba Qwen (DashScope)',
    api: 'openai',
    // The international endpoint; mainland-China accounts use https://dashscope.aliyuncs.com/compatible-mode/v1.
    defaultBaseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    defaultModel: 'qwen-plus',
    envKey: 'QWEN_API_KEY',
    envBaseUrl: 'QWEN_BASE_URL',
  },
  kimi: {
    id: 'kimi',
    name: 'Moonshot Kimi',
    api: 'openai',
    // The global endpoint; mainland-China accounts use https://api.moonshot.cn/v1.
    defaultBaseUrl: 'https://api.moonshot.ai/v1',
    defaultModel: 'moonshot-v1-8k',
    envKey: 'KIMI_API_KEY',
    envBaseUrl: 'KIMI_BASE_URL',
  },
};

export function isProviderId(id: string): id is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(id);
}

/** The `local` engine is not a provider: it needs no key and never leaves the process. */
export const LOCAL_ENGINE = aiRules.LOCAL_ENGINE;
