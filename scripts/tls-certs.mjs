// The mutual-TLS material `npm run keys` prints: a CA, and per process a certificate and key usable as both server
// and client. Node's crypto makes the RSA keys; it cannot write an X.509 certificate, so node-forge (pure JavaScript,
// no dependencies; a devDependency: only this script needs it, never a running service) builds and signs them.
// The CA's private key is used here and then dropped: nothing can issue another certificate for the deployment,
// so rotation means new material for every process (README "Trust model").
import { generateKeyPair, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';

const require = createRequire(import.meta.url);
const forge = require('node-forge');

/** Long-lived on purpose (internal names, a CA whose key is gone): rotation is rerunning `npm run keys`. */
const VALID_YEARS = 10;

/** RSA 2048 by Node (OpenSSL, off the main thread): the slow part, so every key is made at once. */
async function rsaKeyPair() {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    forgePrivate: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' })),
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' })),
  };
}

function newCertificate(publicKey, commonName) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // 16 random bytes with the top bit cleared: a positive DER integer, unique without a counter to keep.
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  cert.serialNumber = serial.toString('hex');
  const now = Date.now();
  // An hour back: a process whose clock lags a little still accepts a certificate made just now.
  cert.validity.notBefore = new Date(now - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now + VALID_YEARS * 365.25 * 24 * 60 * 60 * 1000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  return cert;
}

const base64 = (pem) => Buffer.from(pem).toString('base64');

/**
 * `hosts`: process name → the host name other processes dial it by (compose's service name, the Kubernetes
 * Service). Each certificate names that host, `localhost` and 127.0.0.1 (a container's own health probe, tests).
 * Resolves to every PEM base64-encoded on one line: `{ ca, certs: { [name]: { cert, key } } }`.
 */
export async function generateTlsMaterial(hosts) {
  const names = Object.keys(hosts);
  const [caKeys, ...processKeys] = await Promise.all([undefined, ...names].map(() => rsaKeyPair()));
  const ca = newCertificate(caKeys.forgePublic, 'messaging-crm internal CA');
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    // pathLenConstraint 0: it issues process certificates only, never another CA.
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.forgePrivate, forge.md.sha256.create());
  const caKeyId = ca.generateSubjectKeyIdentifier().getBytes();

  const certs = {};
  for (const [i, name] of names.entries()) {
    const host = hosts[name];
    const keys = processKeys[i];
    const cert = newCertificate(keys.forgePublic, host);
    cert.setIssuer(ca.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      // Both ends of a connection: each process serves its port and calls the others with the same certificate.
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: host },
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
      { name: 'subjectKeyIdentifier' },
      { name: 'authorityKeyIdentifier', keyIdentifier: caKeyId },
    ]);
    cert.sign(caKeys.forgePrivate, forge.md.sha256.create());
    certs[name] = { cert: base64(forge.pki.certificateToPem(cert)), key: base64(keys.pem) };
  }
  return { ca: base64(forge.pki.certificateToPem(ca)), certs };
}
