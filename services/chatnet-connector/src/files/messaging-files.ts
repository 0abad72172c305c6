import { randomBytes } from 'node:crypto';
import http, { IncomingMessage } from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { type GrantKeeper, ORIGIN_METADATA_KEY, type InternalAuth } from '@crm/grpc-kit';

/** The operations of messaging's attachments HTTP port, named like gRPC methods (SERVICE_CALL_POLICY lists them for us). */
const DOWNLOAD = 'messaging.v1.Http/DownloadAttachment';
const UPLOAD = 'messaging.v1.Http/UploadAttachment';

/**
 * Whom a file being sent is read for: the org, and the origin that vouches for it (the credential of the call this
 * service is serving: messaging's, or the gateway's user's). messaging refuses a download whose org only the connector
 * vouches for (ORIGIN_BOUND in @crm/grpc-kit), so a compromised connector cannot read another org's files.
 */
export interface FileReader {
  orgId: string;
  requestId?: string;
  origin?: string;
}

/** A file stored in messaging: what an inbound message's event carries (never the bytes). */
export interface StoredFile {
  id: string;
  fileName: string;
  mimeType: string;
  size: number;
}

/** A file to store: its bytes as a stream (a download in progress) or a buffer (a sandbox push, already decoded). */
export interface FileToStore {
  fileName: string;
  mimeType: string;
  body: Readable | Buffer;
}

/** messaging refused a file or could not be reached; `status` 0 when no answer came. */
export class FileTransferError extends Error {
  override readonly name = 'FileTransferError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Files both ways through messaging's attachments HTTP port, with this service's signed credential carrying the
 * org (and no user): a file being sent is streamed from there to the network, a file received is streamed there
 * before its message is announced. Bytes are never held whole here and never travel through gRPC or the broker.
 */
export class MessagingFiles {
  private readonly base: URL;

  /** `agent`: keep-alive, and with mutual TLS this process's certificate (GrpcTransport.httpAgent). */
  constructor(
    baseUrl: string,
    private readonly auth: InternalAuth,
    private readonly agent: http.Agent,
    /** A received file is stored by the connector on its own: under the org's grant (issue #27). */
    private readonly grants?: Pick<GrantKeeper, 'grantOf'>,
  ) {
    this.base = new URL(baseUrl);
  }

  /** The bytes of one of the org's attachments, as a stream to read once. */
  async open(reader: FileReader, id: string): Promise<Readable> {
    const res = await this.request('GET', `/v1/attachments/${encodeURIComponent(id)}`, this.headers(DOWNLOAD, reader));
    if (res.statusCode !== 200) throw await refusal(res);
    return res;
  }

  /** Store a file for the org (as an upload no message took yet) and return what messaging recorded. */
  async store(orgId: string, file: FileToStore, requestId = ''): Promise<StoredFile> {
    const boundary = `----chatnet-${randomBytes(12).toString('hex')}`;
    // As browsers write it (raw UTF-8; LF, CR and `"` escaped), which is how messaging reads names back.
    const name = file.fileName.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
        `Content-Type: ${file.mimeType.replace(/[\r\n]/g, '')}\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const body = Buffer.isBuffer(file.body)
      ? Readable.from([head, file.body, tail])
      : Readable.from(
          (async function* (source: Readable) {
            yield head;
            for await (const chunk of source) yield chunk as Buffer;
            yield tail;
          })(file.body),
        );
    const res = await this.request(
      'POST',
      '/v1/attachments',
      {
        ...this.headers(UPLOAD, { orgId, requestId, origin: await this.grants?.grantOf(orgId) }),
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body,
    );
    if (res.statusCode !== 201) throw await refusal(res);
    const out = JSON.parse(await text(res)) as { id: string; filename: string; contentType: string; size: number };
    return { id: out.id, fileName: out.filename, mimeType: out.contentType, size: out.size };
  }

  close(): void {
    this.agent.destroy();
  }

  private headers(operation: string, { orgId, requestId, origin }: FileReader): Record<string, string> {
    return {
      authorization: `Bearer ${this.auth.sign({ orgId, origin }, operation)}`,
      ...(origin ? { [ORIGIN_METADATA_KEY]: origin } : {}),
      ...(requestId ? { 'x-request-id': requestId } : {}),
    };
  }

  private request(method: string, path: string, headers: Record<string, string>, body?: Readable): Promise<IncomingMessage> {
    const url = new URL(path, this.base);
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, { method, headers, agent: this.agent }, resolve);
      req.on('error', (err) => reject(new FileTransferError(0, 'unavailable', `messaging's attachments port did not answer: ${err.message}`)));
      if (!body) return void req.end();
      body.on('error', (err) => req.destroy(err));
      body.pipe(req);
    });
  }
}

async function text(res: IncomingMessage): Promise<string> {
  let out = '';
  res.setEncoding('utf8');
  for await (const chunk of res) out += chunk;
  return out;
}

/** messaging's house error body as a FileTransferError. */
async function refusal(res: IncomingMessage): Promise<FileTransferError> {
  const status = res.statusCode ?? 0;
  let code = 'unavailable';
  let message = `messaging answered ${status}`;
  try {
    const body = JSON.parse(await text(res)) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {
    res.resume();
  }
  return new FileTransferError(status, code, message);
}
