import { AppError, decodeRemoteError, ErrorKind, status } from '@crm/grpc-kit';

const KIND_OF: Partial<Record<number, ErrorKind>> = {
  [status.INVALID_ARGUMENT]: 'invalid_argument',
  [status.UNAUTHENTICATED]: 'unauthenticated',
  [status.PERMISSION_DENIED]: 'permission_denied',
  [status.NOT_FOUND]: 'not_found',
  [status.ALREADY_EXISTS]: 'already_exists',
  [status.FAILED_PRECONDITION]: 'failed_precondition',
  [status.RESOURCE_EXHAUSTED]: 'rate_limited',
  [status.OUT_OF_RANGE]: 'payload_too_large',
  [status.UNAVAILABLE]: 'unavailable',
};

export const notLive = (why = 'no connector instance holds it live right now') =>
  new AppError('failed_precondition', `The account is not connected: ${why}`, { code: 'account_not_live' });

/**
 * An error from the peer instance a call was forwarded to. What the peer decided (an AppError) keeps its
 * meaning; a peer that cannot be reached means the account is not live anywhere we can reach.
 */
export function fromPeerError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { code?: number; details?: string; metadata?: import('@crm/grpc-kit').Metadata };
  const fromService = e?.metadata?.get?.('x-error-code').length;
  if (!fromService) return notLive('the connector instance holding it is unreachable');
  const r = decodeRemoteError(e);
  return new AppError(KIND_OF[r.grpcCode] ?? 'internal', r.message, { code: r.code, details: r.details, retryAfter: r.retryAfter });
}
