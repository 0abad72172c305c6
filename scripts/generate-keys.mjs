// `npm run keys`: the secrets a deployment needs, as .env lines: JWT_SECRET, ENCRYPTION_KEY, and the internal
// credential (one Ed25519 private key per process, and every public key), for docker compose or a Kubernetes Secret.
// Keys are random each run: generate once, store them as secrets, and rotate by generating and redeploying all.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let kit;
try {
  kit = require('@crm/grpc-kit');
} catch {
  // Only .env lines go to stdout (it is redirected into a file), so say this on stderr.
  process.stderr.write('✗ @crm/grpc-kit is not built yet: run `npm run build` first.\n');
  process.exit(1);
}
const { privateKeys, publicKeys } = kit.generateInternalKeys(() => randomBytes(32));
const lines = [
  `JWT_SECRET=${randomBytes(32).toString('hex')}`,
  `ENCRYPTION_KEY=${randomBytes(32).toString('base64')}`,
  ...Object.entries(privateKeys).map(([name, key]) => `${name.toUpperCase()}_PRIVATE_KEY=${key}`),
  `SERVICE_PUBLIC_KEYS=${publicKeys}`,
];
process.stdout.write(lines.join('\n') + '\n');
