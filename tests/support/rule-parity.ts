import { status } from '@crm/grpc-kit';

/** One field issue of a refusal: the gateway's 400 `error.details[0]`, or a service's x-error-details-bin. */
export type Issue = { field: string; message: string };

/** The status and first field issue of a gateway answer. */
export const httpIssue = (res: { status: number; body: { error?: { details?: Issue[] } } }) => ({
  status: res.status,
  issue: res.body.error?.details?.[0],
});

/** The code and first field issue of a gRPC call (x-error-details-bin), or OK when the call succeeded. */
export const rpcIssue = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: status.OK, issue: undefined as Issue | undefined }),
    (err: { code: number; metadata: { get(k: string): unknown[] } }) => {
      const raw = err.metadata.get('x-error-details-bin')[0] as Buffer | undefined;
      return { code: err.code, issue: raw ? (JSON.parse(raw.toString('utf8')) as Issue[])[0] : undefined };
    },
  );

/**
 * One rule, one wording: the gateway's 400 and the service's INVALID_ARGUMENT to a direct caller name the same
 * field with the same words. The gateway may name an element (`tags.0`) where the service names the field.
 */
export function expectSameRefusal(http: ReturnType<typeof httpIssue>, rpc: Awaited<ReturnType<typeof rpcIssue>>, field: string): void {
  expect(http.status).toBe(400);
  expect(http.issue?.field.split('.')[0]).toBe(field);
  expect(rpc).toEqual({ code: status.INVALID_ARGUMENT, issue: { field, message: http.issue?.message } });
}
