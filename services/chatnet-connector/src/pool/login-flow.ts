import QRCode from 'qrcode';
import type { SecretBox } from '@crm/crypto';
import { Pool, withTransaction } from '@crm/db';
import { AppError, traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import { type AccountRow, accountRows as repo } from '../account-store';
import { type ChatnetDriver, type ChatnetSession, LoginFailedError, type QrCode } from '../drivers';
import { disconnectedEvent, qrEvent } from '../events';
import type { ConnectorRedis } from '../redis';
import type { Leases } from './leases';
import { type Entry, type LiveSessions, proxyOf } from './live-sessions';

/**
 * The QR image: PNG rows filtered with Paeth alone. By default pngjs tries all five PNG filters on every row and keeps
 * the smallest: five times the filtering for an image of two colours. Paeth alone comes out within 2% of the size
 * (2.9 KB) and, measured here, costs 50 ms instead of 70 for a connector's first code and 9 ms instead of 13 after.
 * qrcode hands rendererOpts to pngjs as they are (its types list only the JPEG and WebP quality).
 */
const QR_IMAGE = { errorCorrectionLevel: 'M', margin: 2, scale: 5, rendererOpts: { filterType: 4 } } as QRCode.QRCodeToDataURLOptions;

export interface LoginFlowOptions {
  config: ConnectorConfig;
  pool: Pool;
  redis: ConnectorRedis;
  log: Logger;
  box: SecretBox;
  driver: ChatnetDriver;
  leases: Leases;
  live: LiveSessions;
}

/** The login call answers once the first QR code is out; a network that cannot produce one fails it (503) instead of the gateway's deadline. */
const FIRST_QR_TIMEOUT_MS = 8_000;

/**
 * QR logins: takes the lease of an account nobody holds, shows its QR codes (Redis, for clients that join late, and
 * the `chatnet_account.qr` event) while the driver waits for a scan, and hands the session to the live sessions once
 * scanned; a login that fails or expires marks the account disconnected and gives the lease back.
 */
export class LoginFlow {
  constructor(private readonly o: LoginFlowOptions) {}

  /**
   * Start a QR login for an account nobody holds. Resolves once the first code is published (or the
   * driver failed to produce one); the login then waits for a scan in the background. False when
   * another instance (or a concurrent call) got the lease first.
   *
   * `traceparent`: the Login call's. The flow keeps it for what it records later, from the network's callbacks (every
   * QR code, the connected event, a failed login's disconnected event, their log lines): the connector has no active
   * context to carry it (main.ts), and these are that call's doing.
   */
  async startLogin(row: AccountRow, traceparent: string | undefined): Promise<boolean> {
    const id = row.id;
    const live = this.o.live;
    if (live.stopped || !(await this.o.leases.acquire(id, 'qr_pending'))) return false;
    const entry: Entry = { accountId: id, orgId: row.org_id, state: 'qr_pending', since: Date.now() };
    live.hold(entry);
    try {
      await repo.markLoginStarted(this.o.pool, id);
      await this.o.leases.clearBackoff(id);
    } catch (err) {
      live.forget(entry);
      await this.o.leases.release(id).catch(() => undefined);
      throw err;
    }

    const abort = new AbortController();
    let firstQr!: { resolve(): void; reject(err: unknown): void };
    const shown = new Promise<void>((resolve, reject) => (firstQr = { resolve, reject }));
    const done = (async () => {
      let session: ChatnetSession;
      try {
        session = await this.o.driver.loginWithQr({
          accountId: id,
          proxyUrl: proxyOf(this.o.box, row),
          handlers: live.handlersFor(entry),
          signal: abort.signal,
          onQr: async (qr) => {
            await this.publishQr(row, qr, traceparent);
            firstQr.resolve();
          },
        });
      } catch (err) {
        firstQr.reject(err);
        const reason = err instanceof LoginFailedError ? err.reason : 'network_error';
        if (!(err instanceof LoginFailedError)) this.o.log.warn({ err, accountId: id, ...traceFields({ traceparent }) }, 'QR login failed');
        await this.loginEnded(entry, reason === 'qr_expired' ? 'qr_login_expired' : reason, traceparent);
        throw new AppError('failed_precondition', `QR login did not complete (${reason})`, { code: reason });
      }
      return live.establish(entry, session, {
        sessionData: session.sessionData,
        fromLogin: true,
        failed: (err) => this.loginEnded(entry, err instanceof AppError ? err.code : 'login_failed', traceparent),
        live: () => this.o.redis.del(this.qrKey(id)).catch(() => undefined),
        traceparent,
      });
    })();
    done.catch(() => undefined);
    entry.login = { abort, done };
    const timer = setTimeout(
      () => firstQr.reject(new AppError('unavailable', 'The chat network did not produce a QR code in time; try again', { code: 'qr_unavailable' })),
      FIRST_QR_TIMEOUT_MS,
    );
    try {
      await shown;
    } catch (err) {
      abort.abort();
      throw err instanceof AppError
        ? err
        : new AppError('unavailable', 'The chat network did not produce a QR code; try again', { code: 'qr_unavailable' });
    } finally {
      clearTimeout(timer);
    }
    return true;
  }

  /** The pending login of an account held here: resolves with the connected account once scanned. */
  pendingLogin(accountId: string): Promise<AccountRow> | undefined {
    return this.o.live.entry(accountId)?.login?.done;
  }

  /** The QR code currently shown for an account (any instance), to send again to a client that joined late. */
  async currentQr(accountId: string): Promise<{ qr: string; expiresAt: string } | null> {
    const raw = await this.o.redis.get(this.qrKey(accountId));
    return raw ? (JSON.parse(raw) as { qr: string; expiresAt: string }) : null;
  }

  private async publishQr(row: AccountRow, qr: QrCode, traceparent: string | undefined): Promise<void> {
    const dataUrl = qr.image
      ? qr.image.startsWith('data:')
        ? qr.image
        : `data:image/png;base64,${qr.image}`
      : await QRCode.toDataURL(qr.code ?? '', QR_IMAGE);
    const ttl = Math.max(1, qr.expiresAt.getTime() - Date.now());
    await this.o.redis.set(this.qrKey(row.id), JSON.stringify({ qr: dataUrl, expiresAt: qr.expiresAt.toISOString() }), { PX: ttl });
    await qrEvent(this.o.pool, row.org_id, row.id, dataUrl, qr.expiresAt, traceparent);
  }

  private qrKey(accountId: string): string {
    return `${this.o.config.REDIS_PREFIX}chatnet:qr:${accountId}`;
  }

  /** The login did not give a live session: take its QR code down, mark the account and give its lease back. */
  private async loginEnded(entry: Entry, reason: string, traceparent: string | undefined): Promise<void> {
    await this.o.redis.del(this.qrKey(entry.accountId)).catch(() => undefined);
    if (!this.o.live.forget(entry)) return;
    try {
      await withTransaction(this.o.pool, async (tx) => {
        const row = await repo.markLoginFailed(tx, entry.accountId, reason);
        if (row) await disconnectedEvent(tx, entry.orgId, entry.accountId, reason, traceparent);
      });
    } finally {
      await this.o.leases.release(entry.accountId).catch(() => undefined);
    }
  }
}
