import type { Queryable } from '@crm/db';

export interface EmailChannelRow {
  org_id: string;
  host: string;
  port: number;
  secure: boolean;
  username: string;
  /** SecretBox ciphertext bound to the org; null when the server takes no login or none was given. */
  password_enc: string | null;
  from_address: string;
  from_name: string;
  updated_by: string | null;
  updated_at: Date;
}

export async function getChannel(db: Queryable, orgId: string): Promise<EmailChannelRow | undefined> {
  const { rows } = await db.query<EmailChannelRow>({
    name: 'automation_email_channel',
    text: 'SELECT * FROM email_channels WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0];
}

export interface ChannelValues {
  host: string;
  port: number;
  secure: boolean;
  username: string;
  passwordEnc: string | null;
  fromAddress: string;
  fromName: string;
}

export async function saveChannel(db: Queryable, orgId: string, v: ChannelValues, userId: string | null): Promise<EmailChannelRow> {
  const { rows } = await db.query<EmailChannelRow>(
    `INSERT INTO email_channels (org_id, host, port, secure, username, password_enc, from_address, from_name, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (org_id) DO UPDATE SET host = EXCLUDED.host, port = EXCLUDED.port, secure = EXCLUDED.secure,
       username = EXCLUDED.username, password_enc = EXCLUDED.password_enc, from_address = EXCLUDED.from_address,
       from_name = EXCLUDED.from_name, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING *`,
    [orgId, v.host, v.port, v.secure, v.username, v.passwordEnc, v.fromAddress, v.fromName, userId],
  );
  return rows[0];
}

export async function deleteChannel(db: Queryable, orgId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM email_channels WHERE org_id = $1', [orgId]);
  return rowCount === 1;
}
