import { createHash } from 'node:crypto';
import { ErrorReply } from '@redis/client';
import type { RedisClient } from './client';

/**
 * A Lua script run by its SHA1 (EVALSHA), sending the source (EVAL) only when the server does not have it yet (after
 * a restart or SCRIPT FLUSH): the body crosses the network once per server, not once per call. This is what ioredis's
 * defineCommand did; node-redis's own `scripts` option would tie every script to the client's creation and type.
 */
export class LuaScript {
  readonly sha1: string;

  constructor(readonly source: string) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  /** Run with `keys` as KEYS and `args` as ARGV; numbers are sent as their decimal text, as Redis expects. */
  async run(client: RedisClient, keys: string[], args: Array<string | number>): Promise<unknown> {
    const options = { keys, arguments: args.map(String) };
    try {
      return await client.evalSha(this.sha1, options);
    } catch (err) {
      if (!(err instanceof ErrorReply && err.message.startsWith('NOSCRIPT'))) throw err;
      return client.eval(this.source, options);
    }
  }
}
