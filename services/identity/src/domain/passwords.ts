import argon2 from 'argon2';
import { identityRules } from '@crm/validation';

// OWASP minimum for argon2id: 19 MiB, 2 iterations, 1 lane (~30 ms here).
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** A hash to compare against when the email is unknown, so both cases take the same time. */
let dummyHash: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    dummyHash ??= argon2.hash('not-a-real-password', OPTIONS);
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}

export function checkPasswordStrength(password: string, field = 'password'): void {
  identityRules.checkPassword(password, field);
}
