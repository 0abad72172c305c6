import { SigningKeys } from './signing-keys';

/** A `whsec_` secret whose key is `text` padded to 32 bytes. */
const whsec = (text: string) => `whsec_${Buffer.from(text.padEnd(32, '.')).toString('base64')}`;
const keyText = (text: string) => text.padEnd(32, '.');

describe('signing keys', () => {
  const box = (plain: Record<string, string>) => {
    const calls: string[] = [];
    return {
      calls,
      decrypt(stored: string, aad: string) {
        calls.push(`${aad}/${stored}`);
        if (!(stored in plain)) throw new Error('unsupported state or unable to authenticate data');
        return plain[stored];
      },
    };
  };

  it('decrypts a stored secret once, and again only for another ciphertext or associated data', () => {
    const b = box({ enc1: whsec('secret-one'), enc2: whsec('secret-two') });
    const keys = new SigningKeys(b);
    expect(keys.keyOf('enc1', 'org/hook')?.toString()).toBe(keyText('secret-one'));
    expect(keys.keyOf('enc1', 'org/hook')?.toString()).toBe(keyText('secret-one'));
    expect(b.calls).toEqual(['org/hook/enc1']);
    // A new secret (or the same re-encrypted under a rotated key) is another ciphertext; another endpoint, other data.
    expect(keys.keyOf('enc2', 'org/hook')?.toString()).toBe(keyText('secret-two'));
    expect(keys.keyOf('enc1', 'org/other')?.toString()).toBe(keyText('secret-one'));
    expect(b.calls).toEqual(['org/hook/enc1', 'org/hook/enc2', 'org/other/enc1']);
  });

  it('never keeps a secret that does not decrypt: each attempt tries again and fails', () => {
    const b = box({});
    const keys = new SigningKeys(b);
    expect(() => keys.keyOf('broken', 'org/hook')).toThrow('unable to authenticate');
    expect(() => keys.keyOf('broken', 'org/hook')).toThrow('unable to authenticate');
    expect(b.calls).toHaveLength(2);
  });

  it('stays bounded: the oldest entries go first when it is full', () => {
    const plain: Record<string, string> = {};
    for (let i = 0; i <= 5_000; i++) plain[`enc${i}`] = whsec('secret-one');
    const b = box(plain);
    const keys = new SigningKeys(b);
    for (let i = 0; i <= 5_000; i++) keys.keyOf(`enc${i}`, 'a');
    b.calls.length = 0;
    keys.keyOf('enc5000', 'a');
    keys.keyOf('enc0', 'a');
    expect(b.calls).toEqual(['a/enc0']);
  });
});
