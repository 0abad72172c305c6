import { connect, type ChannelModel } from 'amqplib';

/**
 * Open a connection the way every part of this package needs it. noDelay: amqplib leaves Nagle on, which
 * holds back small frames (publishes, confirms, acks) and made publish→confirm p99 ~45 ms instead of 2–4 ms
 * (PERFORMANCE.md). The connection name shows up in the broker's connection list.
 */
export function connectAmqp(url: string, connectionName: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<ChannelModel> {
  const opening = connect(url, { noDelay: true, timeout: timeoutMs, clientProperties: { connection_name: connectionName } }).then(corkMuxRounds);
  // A broker that accepts the TCP connection but never finishes the AMQP handshake (seen when it wedged)
  // must fail the attempt, not hang a service's start-up forever; the caller's reconnect loop retries.
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`RabbitMQ did not complete the connection within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([opening, timeout])
    .finally(() => clearTimeout(timer))
    .catch((err) => {
      // If the handshake finishes after we gave up, close that late connection.
      opening.then((c) => c.close()).catch(() => undefined);
      throw err;
    });
}

const CONNECT_TIMEOUT_MS = 10_000;

/** The parts of amqplib's connection this reaches into (lib/connection.js, lib/mux.js of amqplib 0.10 to 2.x). */
interface MuxedConnection {
  muxer?: { out?: { cork?: () => void; uncork?: () => void }; _readIncoming?: () => void };
}

/**
 * amqplib writes every frame to the socket on its own: its mux takes what the channels have queued (a relay's batch
 * of publishes, a consumer's ack, a publish's confirm-wait) and calls socket.write once per frame, and with noDelay
 * each write is a syscall and a TCP segment the broker reads on its own. Corking the socket for one round of the mux
 * sends the round's frames in one writev. Frames, order and flow control (the round still stops when a write
 * returns false, and 'drain' resumes it) are unchanged. An amqplib without this shape is left as it is.
 */
function corkMuxRounds(model: ChannelModel): ChannelModel {
  const mux = (model as unknown as { connection?: MuxedConnection }).connection?.muxer;
  const out = mux?.out;
  const round = mux?._readIncoming;
  if (!mux || !out || typeof round !== 'function' || typeof out.cork !== 'function' || typeof out.uncork !== 'function') return model;
  const [cork, uncork] = [out.cork.bind(out), out.uncork.bind(out)];
  mux._readIncoming = () => {
    cork();
    try {
      round.call(mux);
    } finally {
      uncork();
    }
  };
  return model;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * Delay before reconnect attempt `failures` (0-based): exponential with jitter, so that every service
 * losing the broker at once does not come back in lockstep, capped so recovery stays within seconds.
 */
export function reconnectDelay(failures: number): number {
  const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** failures);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}
