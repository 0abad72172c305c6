import { defineScript, type CommandParser } from '@redis/client';
import NodeRedisClient from '@redis/client/dist/lib/client';
import type { Logger } from '@crm/logger';

// Renew only a lease we still own (compare-and-expire), and publish the live info with it, in one round trip.
const RENEW_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('HSET', KEYS[2], 'instance', ARGV[1], 'state', ARGV[3], 'connectedAt', ARGV[4], 'lastHeartbeat', ARGV[5])
  redis.call('EXPIRE', KEYS[2], ARGV[6])
  return 1
end
return 0`;

// Give a lease back only when it is still ours; the live info turns `disconnected` only when we wrote it.
const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if redis.call('HGET', KEYS[2], 'instance') == ARGV[1] then
    redis.call('HSET', KEYS[2], 'state', 'disconnected', 'connectedAt', '')
  end
  return 1
end
return 0`;

/**
 * The lease scripts, registered on the client: node-redis sends EVALSHA and falls back to EVAL on
 * NOSCRIPT (a restarted or flushed Redis forgets loaded scripts), inside MULTI too.
 */
const scripts = {
  chatnetRenewLease: defineScript({
    NUMBER_OF_KEYS: 2,
    SCRIPT: RENEW_LEASE,
    parseCommand(
      parser: CommandParser,
      leaseKey: string,
      liveKey: string,
      instanceId: string,
      ttlMs: number,
      state: string,
      connectedAt: string,
      heartbeatAt: string,
      liveTtlS: number,
    ) {
      parser.pushKeys([leaseKey, liveKey]);
      parser.push(instanceId, String(ttlMs), state, connectedAt, heartbeatAt, String(liveTtlS));
    },
    transformReply: (reply: unknown) => reply as number,
  }),
  chatnetReleaseLease: defineScript({
    NUMBER_OF_KEYS: 2,
    SCRIPT: RELEASE_LEASE,
    parseCommand(parser: CommandParser, leaseKey: string, liveKey: string, instanceId: string) {
      parser.pushKeys([leaseKey, liveKey]);
      parser.push(instanceId);
    },
    transformReply: (reply: unknown) => reply as number,
  }),
};

/**
 * A command waiting longer than this fails instead of hanging: while Redis is unreachable commands queue
 * for the reconnect, and a heartbeat or a call stuck behind that queue must fail and be retried rather
 * than hold its caller past the gRPC deadline.
 */
const COMMAND_TIMEOUT_MS = 5_000;

// One client class with the scripts for the process (node-redis's createClient builds one per client: see @crm/redis).
const newClient = NodeRedisClient.factory({ scripts });

function build(url: string) {
  return newClient({
    url,
    commandOptions: { timeout: COMMAND_TIMEOUT_MS },
    socket: {
      // Reconnect for as long as it takes (the leases lapse meanwhile and are taken again after), backing off to 2 s.
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** Math.min(retries, 6), 2_000),
    },
  });
}

export type ConnectorRedis = ReturnType<typeof build>;

/**
 * The connector's Redis client (leases, instance registry, QR codes, the sandbox network), connected.
 * node-redis emits 'error' on every failed connection attempt: without a listener that event would
 * crash the process, so errors are logged (once per outage, not once per retry).
 */
export async function connectRedis(url: string, log: Logger): Promise<ConnectorRedis> {
  const client = build(url);
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log.warn({ err }, 'Redis connection error; reconnecting');
  });
  client.on('ready', () => {
    if (down) log.info('Redis connection restored');
    down = false;
  });
  await client.connect();
  return client;
}
