import { aiRules, automationRules, connectorRules } from './index';

/** The field and message a failed check names (grpc-kit's invalid). */
function refusal(run: () => unknown): { field?: string; message: string } | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    const e = err as { message: string; details?: Array<{ field?: string; message?: string }> };
    return { field: e.details?.[0]?.field, message: e.details?.[0]?.message ?? e.message };
  }
}

describe('ai rules', () => {
  it('model: trimmed, "" for the default, refused with other characters', () => {
    expect(aiRules.aiModel('  gpt-4o-mini ')).toBe('gpt-4o-mini');
    expect(aiRules.aiModel('')).toBe('');
    expect(refusal(() => aiRules.aiModel('gpt 4'))?.field).toBe('model');
    expect(refusal(() => aiRules.aiModel('x'.repeat(201)))?.field).toBe('model');
  });
  it('daily quota: a whole number of at least 1, at most the cap when there is one', () => {
    expect(aiRules.dailyQuota(5)).toBe(5);
    expect(refusal(() => aiRules.dailyQuota(0))).toEqual({ field: 'dailyQuota', message: aiRules.DAILY_QUOTA_MESSAGE });
    expect(refusal(() => aiRules.dailyQuota(1.5))?.field).toBe('dailyQuota');
    expect(aiRules.dailyQuota(10, 10)).toBe(10);
    expect(refusal(() => aiRules.dailyQuota(11, 10))?.message).toBe("must be an integer from 1 to 10 (the server's cap)");
  });
  it('API key: trimmed, "" removes it, no spaces, bounded', () => {
    expect(aiRules.apiKey(' sk-abc ')).toBe('sk-abc');
    expect(aiRules.apiKey('')).toBe('');
    expect(refusal(() => aiRules.apiKey('sk abc'))?.field).toBe('apiKey');
    expect(refusal(() => aiRules.apiKey('k'.repeat(aiRules.API_KEY_MAX + 1)))?.field).toBe('apiKey');
  });
  it('base URL: http(s) only, no credentials, query or fragment, trailing slashes dropped', () => {
    expect(aiRules.baseUrl('https://llm.example/v1/')).toBe('https://llm.example/v1');
    expect(aiRules.baseUrl(' ')).toBe('');
    for (const bad of ['ftp://llm.example', 'https://u:p@llm.example', 'https://llm.example/?a=1', 'not a url']) expect(refusal(() => aiRules.baseUrl(bad))?.field).toBe('baseUrl');
  });
});

describe('connector rules', () => {
  it('proxy URL: http(s) or socks, a host, optional credentials, normalised; nothing else', () => {
    expect(connectorRules.proxyUrl('socks5://user:pw@proxy.example:1080/')).toBe('socks5://user:pw@proxy.example:1080');
    expect(connectorRules.proxyUrl('  ')).toBe('');
    for (const bad of ['ftp://proxy.example', 'http://proxy.example/path', 'http://proxy.example?x=1', 'proxy'])
      expect(refusal(() => connectorRules.proxyUrl(bad))?.field).toBe('proxyUrl');
  });
});

describe('automation rules', () => {
  it('reminder minutes: required, a whole number in range', () => {
    expect(automationRules.reminderMinutesBefore(30)).toBe(30);
    expect(automationRules.reminderMinutesBefore(0)).toBe(0);
    expect(refusal(() => automationRules.reminderMinutesBefore(undefined))).toEqual({ field: 'reminderMinutesBefore', message: 'is required' });
    expect(refusal(() => automationRules.reminderMinutesBefore(-1))?.field).toBe('reminderMinutesBefore');
    expect(refusal(() => automationRules.reminderMinutesBefore(1.5))?.field).toBe('reminderMinutesBefore');
  });
});
