import { Metadata, status } from '@grpc/grpc-js';
import { AppError, decodeRemoteError, ErrorKind, errorMetadata, grpcStatusOf, httpStatusOf } from './errors';
import { can } from './permissions';

describe('error mapping: domain kind → gRPC status → HTTP status', () => {
  const expected: [ErrorKind, status, number][] = [
    ['invalid_argument', status.INVALID_ARGUMENT, 400],
    ['unauthenticated', status.UNAUTHENTICATED, 401],
    ['permission_denied', status.PERMISSION_DENIED, 403],
    ['not_found', status.NOT_FOUND, 404],
    ['already_exists', status.ALREADY_EXISTS, 409],
    ['payload_too_large', status.OUT_OF_RANGE, 413],
    ['failed_precondition', status.FAILED_PRECONDITION, 422],
    ['rate_limited', status.RESOURCE_EXHAUSTED, 429],
    ['internal', status.INTERNAL, 500],
    ['unavailable', status.UNAVAILABLE, 503],
  ];
  it.each(expected)('%s → gRPC %i → HTTP %i', (kind, grpc, http) => {
    expect(grpcStatusOf(kind)).toBe(grpc);
    expect(httpStatusOf(grpc)).toBe(http);
  });

  it('DEADLINE_EXCEEDED is 504 and unknown statuses are 500', () => {
    expect(httpStatusOf(status.DEADLINE_EXCEEDED)).toBe(504);
    expect(httpStatusOf(status.UNKNOWN)).toBe(500);
    expect(httpStatusOf(status.DATA_LOSS)).toBe(500);
  });

  it('an AppError survives the wire with its code, details and retry hint', () => {
    const err = new AppError('rate_limited', 'Slow down', { code: 'send_cap', retryAfter: 30, details: [{ field: 'x', message: 'y' }] });
    const decoded = decodeRemoteError({ code: grpcStatusOf(err.kind), details: err.message, metadata: errorMetadata(err) });
    expect(decoded).toEqual({
      grpcCode: status.RESOURCE_EXHAUSTED,
      httpStatus: 429,
      code: 'send_cap',
      message: 'Slow down',
      details: [{ field: 'x', message: 'y' }],
      retryAfter: 30,
    });
  });

  it('details with non-ASCII text (Vietnamese) cross the wire intact', () => {
    const err = new AppError('invalid_argument', 'name: Nguyễn không hợp lệ', {
      details: [{ field: 'name', message: 'tên "Nguyễn Văn Á" quá dài' }],
    });
    const decoded = decodeRemoteError({ code: grpcStatusOf(err.kind), details: err.message, metadata: errorMetadata(err) });
    expect(decoded.details).toEqual([{ field: 'name', message: 'tên "Nguyễn Văn Á" quá dài' }]);
    expect(decoded.message).toBe('name: Nguyễn không hợp lệ');
  });

  it('transport errors never show their raw text to clients', () => {
    const decoded = decodeRemoteError({
      code: status.UNAVAILABLE,
      details: 'No connection established. Last error: connect ECONNREFUSED 10.0.0.5:50052',
      metadata: new Metadata(),
    });
    expect(decoded.message).not.toContain('ECONNREFUSED');
    expect(decoded.httpStatus).toBe(503);
  });
});

describe('role permissions', () => {
  it('owner ⊇ admin ⊇ team_lead ⊇ agent', () => {
    expect(can('owner', 'settings:edit')).toBe(true);
    expect(can('admin', 'settings:edit')).toBe(true);
    expect(can('team_lead', 'settings:edit')).toBe(false);
    expect(can('team_lead', 'automation:manage')).toBe(true);
    expect(can('agent', 'automation:manage')).toBe(false);
    expect(can('agent', 'contacts:write')).toBe(true);
    expect(can('agent', 'contacts:delete')).toBe(false);
    expect(can('team_lead', 'contacts:delete')).toBe(true);
    expect(can('agent', 'contacts:import')).toBe(false);
    expect(can('team_lead', 'contacts:import')).toBe(true);
    expect(can('stranger', 'contacts:write')).toBe(false);
  });
});
