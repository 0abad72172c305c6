import { fields, parseEnv, z } from '@crm/config';

/**
 * The standalone sandbox network's settings (its own process: `node dist/sandbox-network/main.js`). It plays the
 * outside chat network for development, tests and benchmarks, so it refuses to run with NODE_ENV=production.
 */
const Env = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    /** Bind address of its HTTP/WebSocket port; it has no authentication of its own, so keep it on loopback or a private network. */
    SANDBOX_HOST: z.string().default('127.0.0.1'),
    /** Its port: connectors set CHATNET_SANDBOX_URL to it; 0 picks a free port (printed at start). */
    SANDBOX_PORT: fields.port(50070),
    /** The network's state (sessions, friends, directory, sent and kept messages): the connectors' Redis and prefix. */
    REDIS_URL: fields.url('redis://127.0.0.1:6379'),
    REDIS_PREFIX: z.string().default('crm:'),
    LOG_LEVEL: fields.logLevel(),
    OTEL_EXPORTER_OTLP_ENDPOINT: fields.otlpEndpoint(),
  })
  .superRefine((c, ctx) => {
    if (c.NODE_ENV === 'production') {
      ctx.addIssue({
        code: 'custom',
        path: ['NODE_ENV'],
        message: 'the sandbox network is a development and test tool; it never runs in production',
      });
    }
  });

export type SandboxNetworkConfig = z.infer<typeof Env>;

export function loadSandboxConfig(env: Record<string, string | undefined>): SandboxNetworkConfig {
  return parseEnv(Env, env);
}
