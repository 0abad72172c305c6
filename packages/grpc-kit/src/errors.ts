import { Metadata, status } from '@grpc/grpc-js';

/**
 * What went wrong, in domain terms. Each service throws AppError with one of these kinds; one
 * exhaustive switch maps a kind to a gRPC status, and the gateway maps the status to HTTP.
 */
export type ErrorKind =
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'failed_precondition'
  | 'rate_limited'
  | 'payload_too_large'
  | 'unavailable'
  | 'internal';

export interface FieldIssue {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Stable machine-readable code for clients, e.g. `email_taken`; defaults to the kind. */
  readonly code: string;
  readonly details?: FieldIssue[];
  /** Seconds a client should wait, for rate_limited. */
  readonly retryAfter?: number;

  constructor(kind: ErrorKind, message: string, opts: { code?: string; details?: FieldIssue[]; retryAfter?: number } = {}) {
    super(message);
    this.name = 'AppError';
    this.kind = kind;
    this.code = opts.code ?? kind;
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const invalid = (field: string, message: string) =>
  new AppError('invalid_argument', `${field}: ${message}`, { details: [{ field, message }] });
export const forbidden = (message = 'You do not have permission to do this') => new AppError('permission_denied', message);

export function grpcStatusOf(kind: ErrorKind): status {
  switch (kind) {
    case 'invalid_argument':
      return status.INVALID_ARGUMENT;
    case 'unauthenticated':
      return status.UNAUTHENTICATED;
    case 'permission_denied':
      return status.PERMISSION_DENIED;
    case 'not_found':
      return status.NOT_FOUND;
    case 'already_exists':
      return status.ALREADY_EXISTS;
    case 'failed_precondition':
      return status.FAILED_PRECONDITION;
    case 'rate_limited':
      return status.RESOURCE_EXHAUSTED;
    case 'payload_too_large':
      return status.OUT_OF_RANGE;
    case 'unavailable':
      return status.UNAVAILABLE;
    case 'internal':
      return status.INTERNAL;
  }
}

/** gRPC status → HTTP status, as ARCHITECTURE.md fixes it. Anything unlisted is a 500. */
export function httpStatusOf(code: status): number {
  switch (code) {
    case status.OK:
      return 200;
    case status.INVALID_ARGUMENT:
      return 400;
    case status.UNAUTHENTICATED:
      return 401;
    case status.PERMISSION_DENIED:
      return 403;
    case status.NOT_FOUND:
      return 404;
    case status.ALREADY_EXISTS:
      return 409;
    case status.FAILED_PRECONDITION:
      return 422;
    case status.RESOURCE_EXHAUSTED:
      return 429;
    case status.OUT_OF_RANGE:
      return 413;
    case status.UNAVAILABLE:
      return 503;
    case status.DEADLINE_EXCEEDED:
      return 504;
    default:
      return 500;
  }
}

/** Default machine code for a gRPC status, used when the service did not name one. */
export function codeOfStatus(code: status): string {
  switch (code) {
    case status.INVALID_ARGUMENT:
      return 'invalid_argument';
    case status.UNAUTHENTICATED:
      return 'unauthenticated';
    case status.PERMISSION_DENIED:
      return 'permission_denied';
    case status.NOT_FOUND:
      return 'not_found';
    case status.ALREADY_EXISTS:
      return 'already_exists';
    case status.FAILED_PRECONDITION:
      return 'failed_precondition';
    case status.RESOURCE_EXHAUSTED:
      return 'rate_limited';
    case status.OUT_OF_RANGE:
      return 'payload_too_large';
    case status.UNAVAILABLE:
      return 'unavailable';
    case status.DEADLINE_EXCEEDED:
      return 'timeout';
    default:
      return 'internal';
  }
}

/** The trailing metadata that carries an AppError's code, details and retry hint across gRPC. */
export function errorMetadata(err: AppError): Metadata {
  const md = new Metadata();
  md.set('x-error-code', err.code.replace(/[^\x20-\x7e]/g, '_'));
  // Binary metadata: text metadata must be ASCII, and details echo user input (Vietnamese names, say).
  if (err.details) md.set('x-error-details-bin', Buffer.from(JSON.stringify(err.details), 'utf8'));
  if (err.retryAfter !== undefined) md.set('x-retry-after', String(err.retryAfter));
  return md;
}

/** A gRPC error as received by a client, decoded back into its parts. */
export interface RemoteError {
  grpcCode: status;
  httpStatus: number;
  code: string;
  message: string;
  details?: FieldIssue[];
  retryAfter?: number;
}

export function decodeRemoteError(err: { code?: number; details?: string; metadata?: Metadata }): RemoteError {
  const grpcCode = (err.code ?? status.UNKNOWN) as status;
  const md = err.metadata;
  const code = (md?.get('x-error-code')[0] as string | undefined) ?? codeOfStatus(grpcCode);
  const rawDetails = md?.get('x-error-details-bin')[0] as Buffer | undefined;
  const retry = md?.get('x-retry-after')[0] as string | undefined;
  // Only messages the service chose to send (AppError) are shown; transport errors get a generic text.
  const fromService = md?.get('x-error-code').length ? err.details : undefined;
  return {
    grpcCode,
    httpStatus: httpStatusOf(grpcCode),
    code,
    message: fromService ?? defaultMessage(grpcCode),
    details: rawDetails ? (JSON.parse(rawDetails.toString('utf8')) as FieldIssue[]) : undefined,
    retryAfter: retry ? Number(retry) : undefined,
  };
}

function defaultMessage(code: status): string {
  switch (code) {
    case status.UNAVAILABLE:
      return 'A backend service is unavailable; try again shortly';
    case status.DEADLINE_EXCEEDED:
      return 'A backend service did not answer in time';
    default:
      return 'Internal error';
  }
}
