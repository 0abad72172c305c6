import { client, Client, email } from '../support/http';

/** A user of the owner's org with the given role, signed in: its client, id and access token (for sockets). */
export async function member(url: string, owner: Client, role: 'agent' | 'team_lead' | 'admin', name: string = role) {
  const address = email(name.replace(/\W/g, ''));
  const password = 'correct horse battery';
  const created = await owner.post('/api/v1/users', { email: address, fullName: `${name} user`, role, password });
  if (created.status !== 201) throw new Error(`user create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await client(url).post('/api/v1/auth/login', { email: address, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  return { api: client(url).as(login.body.token), id: created.body.id as string, token: login.body.token as string };
}
