import { AppError } from '@crm/grpc-kit';
import { messagingRules as rules } from '@crm/validation';
import { outcomeOf } from './sender';

describe('scheduled send outcomes', () => {
  it('retries a send whose outcome is unknown or whose key is in flight once the key may be taken over', () => {
    const unknown = new AppError('unavailable', 'may or may not have been sent', { code: 'send_outcome_unknown' });
    const inFlight = new AppError('already_exists', 'in progress', { code: 'send_in_progress' });
    expect(outcomeOf(unknown, 60_000)).toEqual({ retryInMs: 60_000, error: 'may or may not have been sent' });
    expect(outcomeOf(inFlight, 30_000)).toEqual({ retryInMs: 30_000, error: 'in progress' });
  });

  it('retries a full send budget after its Retry-After', () => {
    expect(outcomeOf(new AppError('rate_limited', 'slow down', { retryAfter: 7 }), 60_000)).toEqual({ retryInMs: 7_000, error: 'slow down' });
  });

  it('fails on a network refusal, an unreachable connector, an account not connected or gone', () => {
    for (const err of [
      new AppError('unavailable', 'The chat network did not accept the message; try again', { code: 'send_failed' }),
      new AppError('unavailable', 'The chat connector is unavailable; try again shortly'),
      new AppError('failed_precondition', 'Chat-network account cannot send: reconnecting', { code: 'account_not_connected' }),
      new AppError('not_found', 'Conversation not found'),
    ]) {
      expect(outcomeOf(err, 60_000)).toEqual({ failed: err.message });
    }
  });
});

describe('sendAt', () => {
  const now = Date.parse('2031-01-01T00:00:00Z');
  const fieldOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return [(err as AppError).details?.[0]?.field, (err as AppError).details?.[0]?.message];
    }
    return undefined;
  };

  it('takes a future timestamp up to 90 days ahead', () => {
    expect(rules.sendAt('2031-01-01T00:00:01Z', now).toISOString()).toBe('2031-01-01T00:00:01.000Z');
    expect(rules.sendAt('2031-04-01T00:00:00Z', now).toISOString()).toBe('2031-04-01T00:00:00.000Z');
  });

  it('refuses, naming sendAt, a past or present time, one past 90 days, and what is no timestamp', () => {
    expect(fieldOf(() => rules.sendAt('2031-01-01T00:00:00Z', now))).toEqual(['sendAt', rules.SEND_AT_PAST]);
    expect(fieldOf(() => rules.sendAt('2031-04-01T00:00:00.001Z', now))).toEqual(['sendAt', rules.SEND_AT_TOO_FAR]);
    for (const bad of [undefined, '', 'tomorrow', '2031-01-02', '2031-13-01T00:00:00Z'])
      expect(fieldOf(() => rules.sendAt(bad, now))?.[0]).toBe('sendAt');
  });
});
