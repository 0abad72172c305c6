import type { GatewayConfig } from '../config';
import type { Operation } from '../docs/registry';
import { HttpError } from './errors';
import { successStatusOf, type ResponseContract } from './route-area';

/**
 * Every declared route's success body parsed by the schema the document shows (route-area.ts): a field the
 * mapper forgot, renamed or typed differently is a 500 naming it, so every behaviour test that calls a route is also
 * a contract test of its live response. Costs a parse per response, hence off in production unless asked for.
 */
export const strictResponses: ResponseContract = (op: Operation, body: unknown, status?: number) => {
  const schema = op.responses[status ?? successStatusOf(op)];
  if (!schema || typeof schema === 'string') return;
  const parsed = schema.safeParse(body);
  if (parsed.success) return;
  const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
  throw new HttpError(500, 'response_contract', `${op.method} ${op.path} answered a body its schema refuses: ${where}`);
};

/** RESPONSE_CONTRACT: `strict` checks, `off` does not; `auto` (the default) is strict under NODE_ENV=test (every test stack). */
export function responseContract(config: Pick<GatewayConfig, 'NODE_ENV' | 'RESPONSE_CONTRACT'>): ResponseContract | undefined {
  const mode = config.RESPONSE_CONTRACT === 'auto' ? (config.NODE_ENV === 'test' ? 'strict' : 'off') : config.RESPONSE_CONTRACT;
  return mode === 'strict' ? strictResponses : undefined;
}
