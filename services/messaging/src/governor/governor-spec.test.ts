import { DEFAULT_SEND_LIMITS, parseGovernorSpec } from './governor-spec';
import { loadConfig } from '../config';

describe('SEND_LIMITS: the send governor specification', () => {
  it('has safe defaults: automated operations get far less than an agent typing', () => {
    const l = parseGovernorSpec(DEFAULT_SEND_LIMITS);
    expect(l.total).toEqual({ daily: 1500, burst: 20, burstSeconds: 10 });
    expect(l.campaign.daily).toBeLessThan(l.automation.daily);
    expect(l.automation.daily).toBeLessThan(l.ui.daily);
  });

  it('overrides only the types it names', () => {
    const l = parseGovernorSpec('campaign=50/day,1/30s; ui = 10/day, 2/5s');
    expect(l.campaign).toEqual({ daily: 50, burst: 1, burstSeconds: 30 });
    expect(l.ui).toEqual({ daily: 10, burst: 2, burstSeconds: 5 });
    expect(l.automation).toEqual(parseGovernorSpec('').automation);
  });

  it('refuses a malformed entry, an unknown type or a zero, naming the variable at start', () => {
    expect(() => parseGovernorSpec('ui=10/week,2/5s')).toThrow(/must look like/);
    expect(() => parseGovernorSpec('sms=10/day,2/5s')).toThrow(/unknown operation type "sms"/);
    expect(() => parseGovernorSpec('ui=0/day,2/5s')).toThrow(/at least 1/);
    expect(() => loadConfig({ SEND_LIMITS: 'nonsense' })).toThrow(/SEND_LIMITS/);
    expect(loadConfig({ SEND_LIMITS: 'ui=5/day,1/1s' }).SEND_LIMITS.ui).toEqual({ daily: 5, burst: 1, burstSeconds: 1 });
  });
});
