import { AppError } from '@crm/grpc-kit';
import { SocialnetError } from './driver';

/** What a caller of the API sees when the network refuses a request made on its behalf. */
export function networkAppError(err: SocialnetError): AppError {
  switch (err.kind) {
    case 'auth_expired':
      return new AppError('failed_precondition', err.message, { code: 'socialnet_auth_expired' });
    case 'rate_limited':
      return new AppError('rate_limited', err.message, {
        code: 'socialnet_rate_limited',
        retryAfter: Math.max(1, Math.ceil((err.retryAfterMs ?? 1000) / 1000)),
      });
    case 'unavailable':
      return new AppError('unavailable', err.message, { code: 'socialnet_unavailable' });
    case 'not_found':
      return new AppError('not_found', err.message);
  }
}

/** Run a network call for an API request, with its typed failures turned into API errors. */
export async function onNetwork<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof SocialnetError) throw networkAppError(err);
    throw err;
  }
}

/** Network ids (pages, forms, leads) are short opaque tokens; anything else cannot exist (404, like malformed UUIDs). */
export const NETWORK_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
