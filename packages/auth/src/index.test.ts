import { createSecretKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ACCESS_TOKEN_AUDIENCE, ACCESS_TOKEN_ISSUER, createTokenSigner, createTokenVerifier } from './index';

// An access token is only what identity signs for this API: with an expiry, our issuer and our audience. A token
// signed with the same secret for anything else (or by a tool that forgot `exp`, which jsonwebtoken then never checks)
// is refused.
describe('access tokens', () => {
  const secret = 'x'.repeat(40);
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  const verify = createTokenVerifier(secret);
  const claims = { org: 'org-1', role: 'agent', ims: Date.now() };
  const sign = (opts: jwt.SignOptions) => jwt.sign(claims, key, { algorithm: 'HS256', subject: 'user-1', jwtid: 'jti-1', ...opts });

  it('what identity signs is verified', () => {
    const { token } = createTokenSigner(secret, 60)({ id: 'user-1', orgId: 'org-1', role: 'agent' });
    expect(verify(token)).toMatchObject({ sub: 'user-1', org: 'org-1', role: 'agent', iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE });
  });

  it('a token without exp never expires, so it is refused', () => {
    expect(verify(sign({ issuer: ACCESS_TOKEN_ISSUER, audience: ACCESS_TOKEN_AUDIENCE }))).toBeUndefined();
  });

  it('another issuer or audience, or none, is refused', () => {
    expect(verify(sign({ expiresIn: 60, audience: ACCESS_TOKEN_AUDIENCE }))).toBeUndefined();
    expect(verify(sign({ expiresIn: 60, issuer: ACCESS_TOKEN_ISSUER }))).toBeUndefined();
    expect(verify(sign({ expiresIn: 60, issuer: 'someone-else', audience: ACCESS_TOKEN_AUDIENCE }))).toBeUndefined();
    expect(verify(sign({ expiresIn: 60, issuer: ACCESS_TOKEN_ISSUER, audience: 'another-api' }))).toBeUndefined();
    expect(verify(sign({ expiresIn: 60, issuer: ACCESS_TOKEN_ISSUER, audience: ACCESS_TOKEN_AUDIENCE }))).toMatchObject({ sub: 'user-1' });
  });
});
