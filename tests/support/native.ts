/**
 * Node's own require, outside jest's per-file module registry (set by tests/support/node-environment.js). What it loads
 * is loaded once per jest worker and shared by every test file that worker runs: startStack loads the services and the
 * gateway this way. A test that reaches into the stack's running code (a spy on a gateway module, the queues its
 * services declared) must use the same copy: `nativeRequire('@crm/gateway/dist/docs')`, not an import.
 */
declare const __nativeRequire: NodeJS.Require | undefined;

export function nativeRequire<T>(id: string): T {
  if (typeof __nativeRequire !== 'function') throw new Error('tests run in tests/support/node-environment.js (jest.config.js testEnvironment)');
  // Resolved by jest first: the same file a plain import would load, whatever the folder of the caller.
  return __nativeRequire(require.resolve(id)) as T;
}
