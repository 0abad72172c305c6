import { AppError } from '@crm/grpc-kit';

/** The field issue a check threw (an INVALID_ARGUMENT), or undefined when it passed. */
export function issueOf(check: () => unknown): { field: string; message: string } | undefined {
  try {
    check();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('invalid_argument');
    return (err as AppError).details?.[0];
  }
}
