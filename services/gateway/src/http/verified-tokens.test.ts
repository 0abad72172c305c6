import type { AccessClaims } from '@crm/auth';
import { rememberVerified } from './verified-tokens';

const claims = (token: string, exp: number): AccessClaims => ({ sub: `u-${token}`, org: 'o', role: 'agent', jti: token, iat: 0, ims: 0, exp });

describe('rememberVerified', () => {
  let now = 1_000_000_000;
  let calls: string[];
  const verify = (token: string) => {
    calls.push(token);
    return token.startsWith('good') ? claims(token, 1_000_000 + 60) : undefined;
  };
  beforeEach(() => {
    now = 1_000_000_000;
    calls = [];
  });

  it('verifies a token once and answers from memory until its exp second', () => {
    const check = rememberVerified(verify, () => now);
    expect(check('good-1')?.sub).toBe('u-good-1');
    now += 59_999;
    expect(check('good-1')?.sub).toBe('u-good-1');
    expect(calls).toEqual(['good-1']);
    // jsonwebtoken refuses from the exp second on; so does the memory (and it forgets the token).
    now += 1;
    expect(check('good-1')).toBeUndefined();
    expect(calls).toEqual(['good-1']);
  });

  it('does not remember refused tokens', () => {
    const check = rememberVerified(verify, () => now);
    expect(check('bad')).toBeUndefined();
    expect(check('bad')).toBeUndefined();
    expect(calls).toEqual(['bad', 'bad']);
  });

  it('is bounded: past 10 000 tokens the oldest are verified again', () => {
    const check = rememberVerified(verify, () => now);
    for (let i = 0; i <= 10_000; i++) check(`good-${i}`);
    calls = [];
    check('good-10000');
    check('good-0');
    expect(calls).toEqual(['good-0']);
  });
});
