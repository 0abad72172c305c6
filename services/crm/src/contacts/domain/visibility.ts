import type { CallContext } from '@crm/grpc-kit';

/**
 * The user whose inbox visibility narrows contact reads: a signed-in agent (the org's setting decides, inside the
 * query). Team leads and above, API-key integrations and services see every contact of the org.
 */
export function viewerOf(ctx: CallContext): string | undefined {
  return ctx.role === 'agent' && ctx.userId ? ctx.userId : undefined;
}
