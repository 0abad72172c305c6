/**
 * The one way services reach Redis: a node-redis client with logging, a never-ending capped reconnect and a bounded
 * command time (client.ts), and Lua scripts run by SHA1 (lua-script.ts).
 */
export {
  closeRedisClient,
  createRedisClient,
  DEFAULT_COMMAND_TIMEOUT_MS,
  MAX_RECONNECT_DELAY_MS,
  reconnectDelay,
  redisAnswers,
  type RedisClient,
  type RedisClientOptions,
} from './client';
export { LuaScript } from './lua-script';
