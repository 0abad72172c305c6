import http from 'node:http';
import type { ChatnetProfile, DisconnectInfo, InboundMessage, ReactionNotice, RecallNotice, SeenReceipt } from './driver';
import type { LiveAction } from './sandbox-wire';

/**
 * What the sandbox's control API asks of the network's live side: push to an account's live connection (false when
 * the network has none for it) or keep a message for its next one. The in-process SandboxNetwork is one; with a
 * standalone network process (CHATNET_SANDBOX_URL) RemoteSandboxLive asks that process.
 */
export interface SandboxLive {
  /** Complete the account's pending QR login; false when none is pending. */
  scan(accountId: string, profile: ChatnetProfile): Promise<boolean>;
  /** Resolves once the connector recorded the message. */
  deliver(accountId: string, message: InboundMessage): Promise<boolean>;
  seen(accountId: string, receipt: SeenReceipt): Promise<boolean>;
  recalled(accountId: string, notice: RecallNotice): Promise<boolean>;
  reacted(accountId: string, notice: ReactionNotice): Promise<boolean>;
  /** `traceparent`: the control call's, which what the connection records continues (Pushed). */
  friendAccepted(accountId: string, uid: string, traceparent?: string): Promise<boolean>;
  /** Cut the account's live connection; resolves once the connector was told (its pool saw the disconnect). */
  drop(accountId: string, info: DisconnectInfo): Promise<boolean>;
  hold(accountId: string, message: InboundMessage): Promise<void>;
}

/** Control calls wait at most this long for the network (a push waits for the connector to record it). */
const CALL_TIMEOUT_MS = 10_000;

/**
 * The standalone network's live side over HTTP (`POST /live/:accountId/:action`, answered `{live}`). `dropped` waits
 * until this process's driver handled the cut of that account's connection: the network answers the call on one
 * socket and tells the connection on another, and the caller must not see the drop before the pool does.
 */
export class RemoteSandboxLive implements SandboxLive {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly baseUrl: string,
    private readonly dropped: (accountId: string) => Promise<void>,
  ) {}

  scan(accountId: string, profile: ChatnetProfile): Promise<boolean> {
    return this.call(accountId, 'scan', profile);
  }

  deliver(accountId: string, message: InboundMessage): Promise<boolean> {
    return this.call(accountId, 'message', message);
  }

  seen(accountId: string, receipt: SeenReceipt): Promise<boolean> {
    return this.call(accountId, 'seen', receipt);
  }

  recalled(accountId: string, notice: RecallNotice): Promise<boolean> {
    return this.call(accountId, 'recall', notice);
  }

  reacted(accountId: string, notice: ReactionNotice): Promise<boolean> {
    return this.call(accountId, 'react', notice);
  }

  friendAccepted(accountId: string, uid: string, traceparent?: string): Promise<boolean> {
    return this.call(accountId, 'friend_accepted', { uid, traceparent });
  }

  async drop(accountId: string, info: DisconnectInfo): Promise<boolean> {
    const cut = this.dropped(accountId);
    const live = await this.call(accountId, 'drop', info);
    // Bounded: a socket that never tells (it broke at that moment) ends in the pool's own lost-connection handling.
    if (live) await Promise.race([cut, new Promise((resolve) => setTimeout(resolve, CALL_TIMEOUT_MS).unref())]);
    return live;
  }

  async hold(accountId: string, message: InboundMessage): Promise<void> {
    await this.call(accountId, 'hold', message);
  }

  close(): void {
    this.agent.destroy();
  }

  private call(accountId: string, action: LiveAction, payload: unknown): Promise<boolean> {
    const url = new URL(`/live/${encodeURIComponent(accountId)}/${action}`, this.baseUrl);
    const body = JSON.stringify(payload);
    return new Promise((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          timeout: CALL_TIMEOUT_MS,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new Error(`sandbox network answered ${action} with ${res.statusCode}: ${text}`));
            resolve((JSON.parse(text) as { live: boolean }).live);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`sandbox network did not answer ${action} within ${CALL_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}
