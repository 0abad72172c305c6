import type { BusinessHours } from '@crm/business-hours';
import {
  AppError,
  CallContext,
  type ClientFor,
  createServiceClient,
  type GrpcTransport,
  InternalAuth,
  type LbPolicy,
  loadProto,
  serviceDefinition,
  traceFields,
} from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';

/** The hours an org keeps (messaging owns them): the org's, and those of the accounts with their own. */
export interface OrgBusinessHours {
  org: BusinessHours;
  accounts: Map<string, BusinessHours>;
  /** What applies to a conversation's account: its own, else the org's (unknown account: the org's). */
  of(accountId: string | null): BusinessHours;
}

export interface BusinessHoursSource {
  forOrg(ctx: CallContext): Promise<OrgBusinessHours>;
  close(): void;
}

type Wire = { timezone: string; days: Array<{ day: number; open: string; close: string }>; holidays: string[] };
const hoursOf = (h: Wire): BusinessHours => ({
  timezone: h.timezone,
  days: h.days.map((d) => ({ day: d.day, open: d.open, close: d.close })),
  holidays: [...h.holidays],
});

/**
 * Business hours from messaging's ServiceLevelsService, asked per analytics request that counts open hours only.
 * Unlike a contact's conversations this must be answered: a figure computed without the hours would be wrong, so a
 * failure is unavailable (503) rather than a silent fallback.
 */
export function messagingBusinessHours(
  addr: string,
  auth: InternalAuth,
  deadlineMs: number,
  log: Logger,
  lbPolicy: LbPolicy,
  transport: GrpcTransport,
): BusinessHoursSource {
  let client: ClientFor<'messaging.v1.ServiceLevelsService'> | undefined;
  const get = () =>
    (client ??= createServiceClient(
      serviceDefinition(loadProto('messaging/v1/service-levels.proto'), 'messaging.v1.ServiceLevelsService'),
      addr,
      auth,
      deadlineMs,
      lbPolicy,
      transport,
    ));
  return {
    async forOrg(ctx) {
      try {
        const res = await get().ListBusinessHours(
          {},
          { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
          { deadlineMs },
        );
        const org = hoursOf(res.org!);
        const accounts = new Map((res.accounts ?? []).map((a) => [a.chatnetAccountId, hoursOf(a)] as const));
        return { org, accounts, of: (accountId) => (accountId && accounts.get(accountId)) || org };
      } catch (err) {
        log.warn(
          { requestId: ctx.requestId, addr, err: { message: (err as Error).message, code: (err as { code?: number }).code }, ...traceFields(ctx) },
          'messaging did not answer business hours',
        );
        throw new AppError('unavailable', 'Cannot count open hours now: the messaging service is unavailable');
      }
    },
    close: () => client?.close(),
  };
}
