import { aiRules, automationRules, connectorRules } from './index';
import { issueOf } from './test-support/issue-of';

describe('ai rules', () => {
  it('model: trimmed, "" for the default, refused with other characters', () => {
    expect(aiRules.aiModel('  gpt-4o-mini ')).toBe('gpt-4o-mini');
    expect(aiRules.aiModel('')).toBe('');
    expect(issueOf(() => aiRules.aiModel('gpt 4'))?.field).toBe('model');
    expect(issueOf(() => aiRules.aiModel('x'.repeat(201)))?.field).toBe('model');
  });
  it('daily quota: a whole number of at least 1, at most the cap when there is one', () => {
    expect(aiRules.dailyQuota(5)).toBe(5);
    expect(issueOf(() => aiRules.dailyQuota(0))).toEqual({ field: 'dailyQuota', message: aiRules.DAILY_QUOTA_MESSAGE });
    expect(issueOf(() => aiRules.dailyQuota(1.5))?.field).toBe('dailyQuota');
    expect(aiRules.dailyQuota(10, 10)).toBe(10);
    expect(issueOf(() => aiRules.dailyQuota(11, 10))?.message).toBe("must be an integer from 1 to 10 (the server's cap)");
  });
  it('API key: trimmed, "" removes it, no spaces, bounded', () => {
    expect(aiRules.apiKey(' sk-abc ')).toBe('sk-abc');
    expect(aiRules.apiKey('')).toBe('');
    expect(issueOf(() => aiRules.apiKey('sk abc'))?.field).toBe('apiKey');
    expect(issueOf(() => aiRules.apiKey('k'.repeat(aiRules.API_KEY_MAX + 1)))?.field).toBe('apiKey');
  });
  it('base URL: http(s) only, no credentials, query or fragment, trailing slashes dropped', () => {
    expect(aiRules.baseUrl('https://llm.example/v1/')).toBe('https://llm.example/v1');
    expect(aiRules.baseUrl(' ')).toBe('');
    for (const bad of ['ftp://llm.example', 'https://u:p@llm.example', 'https://llm.example/?a=1', 'not a url'])
      expect(issueOf(() => aiRules.baseUrl(bad))?.field).toBe('baseUrl');
  });
});

describe('connector rules', () => {
  it('proxy URL: http(s) or socks, a host, optional credentials, normalised; nothing else', () => {
    expect(connectorRules.proxyUrl('socks5://user:pw@proxy.example:1080/')).toBe('socks5://user:pw@proxy.example:1080');
    expect(connectorRules.proxyUrl('  ')).toBe('');
    for (const bad of ['ftp://proxy.example', 'http://proxy.example/path', 'http://proxy.example?x=1', 'proxy'])
      expect(issueOf(() => connectorRules.proxyUrl(bad))?.field).toBe('proxyUrl');
  });
});

describe('automation rules', () => {
  it('reminder minutes: required, a whole number in range', () => {
    expect(automationRules.reminderMinutesBefore(30)).toBe(30);
    expect(automationRules.reminderMinutesBefore(0)).toBe(0);
    expect(issueOf(() => automationRules.reminderMinutesBefore(undefined))).toEqual({ field: 'reminderMinutesBefore', message: 'is required' });
    expect(issueOf(() => automationRules.reminderMinutesBefore(-1))?.field).toBe('reminderMinutesBefore');
    expect(issueOf(() => automationRules.reminderMinutesBefore(1.5))?.field).toBe('reminderMinutesBefore');
  });
});
