import type { Pool } from 'pg';

/** A column holding SecretBox ciphertexts, and how to rebuild the AAD each value was bound to. */
export interface EncryptedColumn {
  table: string;
  column: string;
  /** The columns that identify a row (and feed the AAD). */
  key: string[];
  aad(row: Record<string, string>): string;
}

/** What rotation needs of a SecretBox (@crm/crypto), without this package depending on it. */
export interface RotatingBox {
  needsRotation(stored: string): boolean;
  decrypt(stored: string, aad: string): string;
  reencrypt(stored: string, aad: string): string;
}

export interface RotationResult {
  table: string;
  column: string;
  rotated: number;
  current: number;
}

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not a plain identifier: ${name}`);
  return `"${name}"`;
};

/**
 * Re-encrypts every value of `columns` written under an older key with the box's current key (`npm run
 * rotate-keys`), so the old key can be retired. Each value is replaced only if it is still the one read (a
 * concurrent change wins, and is already under the current key). A value that does not decrypt stops the run
 * with its table, column and row: retiring a key that still guards it would lose it. Values already under the
 * current key are decrypted too, so a run with the new key alone proves nothing needs an old one.
 */
export async function rotateSecrets(pool: Pool, box: RotatingBox, columns: EncryptedColumn[]): Promise<RotationResult[]> {
  const results: RotationResult[] = [];
  for (const c of columns) {
    const keys = c.key.map(ident);
    const col = ident(c.column);
    const { rows } = await pool.query<Record<string, string>>(
      `SELECT ${keys.map((k) => `${k}::text`).join(', ')}, ${col} AS value FROM ${ident(c.table)} WHERE ${col} IS NOT NULL`,
    );
    let rotated = 0;
    for (const row of rows) {
      let next: string | undefined;
      try {
        // A value already under the current key is decrypted all the same: the run proves every secret reads
        // with the keys given, so a run with the new key alone shows the old one can go.
        if (!box.needsRotation(row.value)) box.decrypt(row.value, c.aad(row));
        else next = box.reencrypt(row.value, c.aad(row));
      } catch (err) {
        throw new Error(
          `${c.table}.${c.column} of ${c.key.map((k) => `${k}=${row[k]}`).join(', ')} does not decrypt with the keys given: ${(err as Error).message}`,
        );
      }
      if (next === undefined) continue;
      const where = keys.map((k, i) => `${k}::text = $${i + 3}`).join(' AND ');
      const res = await pool.query(`UPDATE ${ident(c.table)} SET ${col} = $1 WHERE ${col} = $2 AND ${where}`, [
        next,
        row.value,
        ...c.key.map((k) => row[k]),
      ]);
      rotated += res.rowCount ?? 0;
    }
    results.push({ table: c.table, column: c.column, rotated, current: rows.length - rotated });
  }
  return results;
}
