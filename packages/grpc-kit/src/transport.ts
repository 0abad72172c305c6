import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { ConfigError } from '@crm/config';
import type { Logger } from '@crm/logger';

/** The variables every process reads for mutual TLS (@crm/config grpcTlsEnv): all three or none. */
export interface GrpcTlsEnv {
  NODE_ENV?: string;
  /** The deployment's CA certificate(s): PEM, base64-encoded on one line (several PEM blocks: a rotation in progress). */
  GRPC_TLS_CA?: string;
  /** This process's certificate, issued by that CA. */
  GRPC_TLS_CERT?: string;
  /** This process's private key. */
  GRPC_TLS_KEY?: string;
}

const TLS_VARIABLES = ['GRPC_TLS_CA', 'GRPC_TLS_CERT', 'GRPC_TLS_KEY'] as const;

/** PEM bytes: the CA certificate(s) peers must be issued by, this process's certificate and its key. */
interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/**
 * How this process's internal connections are made: its gRPC servers and clients, and messaging's attachments HTTP
 * port and its callers. Plaintext (npm start, tests), or mutual TLS: a server accepts only clients presenting a
 * certificate from the deployment's CA, and a client talks only to a server whose certificate the CA issued for the
 * host name it dialled. The signed internal credential still travels on every call; TLS adds that a reachable port
 * and a stolen token are not enough without a certificate, and that nothing on the wire is readable.
 */
export class GrpcTransport {
  static readonly plaintext = new GrpcTransport(undefined);

  static mutualTls(material: TlsMaterial): GrpcTransport {
    return new GrpcTransport(material);
  }

  /** One ChannelCredentials per transport: grpc-js shares connections only between channels with the same one. */
  private channel?: grpc.ChannelCredentials;

  private constructor(
    private readonly material: TlsMaterial | undefined,
    private readonly serverName?: string,
  ) {}

  get secure(): boolean {
    return this.material !== undefined;
  }

  /**
   * The same credentials, but the server's certificate is checked against `name` whatever address was dialled:
   * connector instances reach each other at a pod IP or container id no certificate names.
   */
  expecting(name: string): GrpcTransport {
    return new GrpcTransport(this.material, name);
  }

  serverCredentials(): grpc.ServerCredentials {
    const m = this.material;
    if (!m) return grpc.ServerCredentials.createInsecure();
    // checkClientCertificate: a client without a certificate from the CA fails the handshake, before any call.
    return grpc.ServerCredentials.createSsl(m.ca, [{ cert_chain: m.cert, private_key: m.key }], true);
  }

  channelCredentials(): grpc.ChannelCredentials {
    const m = this.material;
    // createSsl checks the server's certificate against the CA and the dialled host name (grpc-js's default).
    return (this.channel ??= m ? grpc.credentials.createSsl(m.ca, m.key, m.cert) : grpc.credentials.createInsecure());
  }

  /** Options for a client's channel: the expected server name, when it is not the dialled host's. */
  channelOptions(): grpc.ChannelOptions {
    return this.material && this.serverName ? { 'grpc.ssl_target_name_override': this.serverName } : {};
  }

  /** An HTTP server for internal callers: HTTPS that requires a client certificate from the CA when TLS is on. */
  createHttpServer(listener: http.RequestListener): http.Server | https.Server {
    const m = this.material;
    if (!m) return http.createServer(listener);
    return https.createServer({ ca: m.ca, cert: m.cert, key: m.key, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' }, listener);
  }

  /**
   * A keep-alive agent for requests to an internal HTTP port at `url` (`variable` names the setting in errors). With
   * TLS on, the URL must be https:// and requests present this process's certificate.
   */
  httpAgent(url: URL, variable: string): http.Agent {
    const m = this.material;
    if (url.protocol !== 'https:') {
      if (m)
        throw new ConfigError(
          `Invalid configuration:\n  ${variable}: must be an https:// URL when GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are set`,
        );
      return new http.Agent({ keepAlive: true });
    }
    if (!m) return new https.Agent({ keepAlive: true });
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return new https.Agent({
      keepAlive: true,
      ca: m.ca,
      cert: m.cert,
      key: m.key,
      // Checked against the URL's host, never the request's Host header: a proxied request carries the client's.
      checkServerIdentity: (_servername, cert) => tls.checkServerIdentity(host, cert),
      ...(isIP(host) ? {} : { servername: host }),
    });
  }
}

function bad(lines: Array<[string, string]>): never {
  throw new ConfigError(`Invalid configuration:\n${lines.map(([name, message]) => `  ${name}: ${message}`).join('\n')}`);
}

/** The PEM text of a variable: base64 of a PEM file (what `npm run keys` prints), or the PEM itself. */
function pemOf(name: string, value: string): string {
  const trimmed = value.trim();
  const text = trimmed.startsWith('-----BEGIN') ? trimmed : Buffer.from(trimmed, 'base64').toString('utf8');
  if (!text.includes('-----BEGIN')) bad([[name, 'must be a PEM file base64-encoded on one line (npm run keys prints them)']]);
  return text;
}

function certificates(name: string, pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) bad([[name, 'holds no certificate (-----BEGIN CERTIFICATE-----)']]);
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      return bad([[name, `is not a readable certificate: ${(err as Error).message}`]]);
    }
  });
}

function privateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    return bad([['GRPC_TLS_KEY', `is not a readable private key: ${(err as Error).message}`]]);
  }
}

/**
 * This process's transport from its environment. Unset: plaintext, with a warning under NODE_ENV=production. Set:
 * the three must belong together (the key is the certificate's, the CA issued it, it has not expired), so a wrong
 * value stops start-up with a line naming it rather than failing every handshake later.
 */
export function grpcTransportFromEnv(env: GrpcTlsEnv, log?: Logger): GrpcTransport {
  const given = TLS_VARIABLES.filter((name) => env[name]?.trim());
  if (given.length === 0) {
    if (env.NODE_ENV === 'production') {
      log?.warn(
        'GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are not set: internal gRPC and attachment traffic is plaintext (npm run keys generates certificates)',
      );
    }
    return GrpcTransport.plaintext;
  }
  const missing = TLS_VARIABLES.filter((name) => !given.includes(name));
  if (missing.length > 0)
    bad(missing.map((name) => [name, `is required when ${given.join(' and ')} ${given.length > 1 ? 'are' : 'is'} set (all three or none)`]));

  const ca = pemOf('GRPC_TLS_CA', env.GRPC_TLS_CA!);
  const cert = pemOf('GRPC_TLS_CERT', env.GRPC_TLS_CERT!);
  const key = pemOf('GRPC_TLS_KEY', env.GRPC_TLS_KEY!);
  const authorities = certificates('GRPC_TLS_CA', ca);
  if (!authorities.every((c) => c.ca)) bad([['GRPC_TLS_CA', 'must hold CA certificates only (basicConstraints CA:true)']]);
  const [own] = certificates('GRPC_TLS_CERT', cert);
  if (!own.checkPrivateKey(privateKey(key))) bad([['GRPC_TLS_KEY', 'is not the key of GRPC_TLS_CERT']]);
  if (!authorities.some((c) => own.checkIssued(c) && own.verify(c.publicKey))) bad([['GRPC_TLS_CERT', 'was not issued by GRPC_TLS_CA']]);
  if (new Date(own.validTo).getTime() < Date.now()) bad([['GRPC_TLS_CERT', `expired on ${own.validTo}; npm run keys makes new certificates`]]);
  return GrpcTransport.mutualTls({ ca: Buffer.from(ca), cert: Buffer.from(cert), key: Buffer.from(key) });
}
