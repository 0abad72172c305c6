import { type NetworkUser, networkPhoneDigits } from '../drivers';

/**
 * zca-js apis/findUser.ts: the profile (`UserBasic`) of whoever uses a phone number. zca-js passes the network's
 * "no such user" answer (error code 216) through as a result without a `uid`; any other error rejects.
 */
export interface ZcaPhoneApi {
  findUser(phoneNumber: string): Promise<{ uid?: string; display_name?: string; zalo_name?: string; avatar?: string } | null | undefined>;
}

/**
 * A phone lookup on the real network. The number goes as its digits with the country code (`84…`, crm's E.164
 * without the `+`): zca-js rewrites only a leading 0, and only for a Vietnamese-language session.
 */
export async function findUserByPhone(api: ZcaPhoneApi, phone: string): Promise<NetworkUser | null> {
  const digits = networkPhoneDigits(phone);
  if (!digits) return null;
  const user = await api.findUser(digits);
  if (!user?.uid) return null;
  return { uid: String(user.uid), displayName: user.display_name || user.zalo_name || '', avatarUrl: user.avatar || '' };
}
