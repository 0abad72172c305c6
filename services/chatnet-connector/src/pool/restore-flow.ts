import type { SecretBox } from '@crm/crypto';
import type { Pool } from '@crm/db';
import { AppError, traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import { aad, type AccountRow, accountRows as repo } from '../account-store';
import { type ChatnetDriver, type ChatnetSession, SessionExpiredError } from '../drivers';
import { notLive } from './remote-errors';
import type { Leases } from './leases';
import { type Entry, type LiveSessions, proxyOf } from './live-sessions';

export interface RestoreFlowOptions {
  config: ConnectorConfig;
  pool: Pool;
  log: Logger;
  box: SecretBox;
  driver: ChatnetDriver;
  leases: Leases;
  live: LiveSessions;
}

/**
 * Reconnects accounts from their stored session data (a takeover by the lease keeper's scan, or a user's reconnect),
 * and decides what a failure means: an expired session needs a new QR login, anything else is retried with back-off.
 */
export class RestoreFlow {
  constructor(private readonly o: RestoreFlowOptions) {}

  /**
   * Connect a held account (lease already taken, state `connecting`) from its stored session data.
   * SessionExpiredError → disconnected for good (a new QR login is needed); other failures → disconnected,
   * retried with back-off by whichever instance scans next. `traceparent`: the Reconnect call's, which what it records
   * continues (connected or disconnected event, log lines); undefined for a takeover by the scan (a trace of its own).
   */
  async restore(accountId: string, orgId: string, traceparent: string | undefined): Promise<AccountRow> {
    const live = this.o.live;
    const entry: Entry = { accountId, orgId, state: 'connecting', since: Date.now() };
    live.hold(entry);
    const giveUp = async () => {
      live.forget(entry);
      await this.o.leases.release(accountId).catch(() => undefined);
    };
    let row: AccountRow | undefined;
    let sessionData: string;
    try {
      row = await repo.getAccountById(this.o.pool, accountId);
      if (!row || !row.session_enc)
        throw new AppError('failed_precondition', 'The account has no stored session; log in with a QR code', { code: 'no_session' });
      sessionData = this.o.box.decrypt(row.session_enc, aad(row.org_id, row.id));
    } catch (err) {
      await giveUp();
      throw err;
    }
    let session: ChatnetSession;
    try {
      session = await withTimeout(
        this.o.driver.restoreSession(sessionData, { accountId, proxyUrl: proxyOf(this.o.box, row!), handlers: live.handlersFor(entry) }),
        this.o.config.RESTORE_TIMEOUT_MS,
      );
    } catch (err) {
      const expired = err instanceof SessionExpiredError;
      if (!expired) {
        const delay = await this.o.leases.backOff(accountId, Math.max(this.o.config.RECONNECT_DELAY_MS, 1000)).catch(() => 0);
        this.o.log.warn({ err, accountId, retryInMs: delay, ...traceFields({ traceparent }) }, 'restoring a session failed');
      }
      await live.recordDisconnect(orgId, accountId, expired ? 'session_expired' : 'reconnect_failed', !expired, traceparent);
      await giveUp();
      throw expired
        ? new AppError('failed_precondition', 'The stored session has expired; log in with a QR code again', { code: 'session_expired' })
        : new AppError('unavailable', 'Could not reconnect to the chat network; it is retried automatically', { code: 'reconnect_failed' });
    }
    if (!live.isCurrent(entry)) {
      // Released (deleted, stopped) while connecting.
      await session.disconnect();
      throw notLive('the connection was closed while reconnecting');
    }
    return live.establish(entry, session, {
      sessionData: session.sessionData !== sessionData ? session.sessionData : undefined,
      fromLogin: false,
      traceparent,
    });
  }
}

/** The promise's value, or a rejection after `ms`; a session that arrives too late is closed, not leaked. */
function withTimeout<T extends ChatnetSession>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`timed out after ${ms} ms`));
    }, ms);
    promise.then(
      (session) => {
        clearTimeout(timer);
        if (timedOut) session.disconnect().catch(() => undefined);
        else resolve(session);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
