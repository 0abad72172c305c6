import * as grpc from '@grpc/grpc-js';
import type { common } from '@crm/proto-types';
import { loadProto, serviceDefinition } from './proto';
import { serviceError, unaryCall, type Channel, type UnaryMethod } from './unary-call';

/**
 * Unary calls a process makes to the same service in the same turn of its event loop go out as one call
 * (proto/common/v1/call_batch.proto). Measured on the two-core machines this is built on (bench/gateway/floor, session
 * 46): a gRPC call costs its client and its server ~450 µs of CPU together (HTTP/2 headers, a stream, grpc-js's call
 * machinery), several times the work a read does; 50 profile reads at once went from 38% of a one-process server's
 * throughput to 76% when each turn's calls shared one. A call alone in its turn (a quiet process) goes out as before.
 */

const batchDef = () => serviceDefinition(loadProto('common/v1/call_batch.proto'), 'common.v1.CallBatch');
type BatchMethod = grpc.MethodDefinition<common.CallBatchRequest, common.BatchedCallResults__Output>;
let runMethod: BatchMethod | undefined;
/** The Run method's definition: its path and codecs. */
export const callBatchMethod = (): BatchMethod => (runMethod ??= batchDef().service.Run as unknown as BatchMethod);

/** Batches carry at most this many calls, and about this many request bytes; more go out in further batches. */
export const MAX_CALLS_PER_BATCH = 64;
const MAX_BATCH_REQUEST_BYTES = 4 * 1024 * 1024;

type Entry = common.MetadataEntry;

export function entriesOf(md: grpc.Metadata | undefined): Entry[] {
  if (!md) return [];
  const out: Entry[] = [];
  for (const [key, values] of Object.entries(md.toJSON()))
    for (const v of values) out.push(typeof v === 'string' ? { key, value: v } : { key, binary: v });
  return out;
}

export function metadataOf(entries: readonly common.MetadataEntry__Output[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const e of entries) md.add(e.key, e.key.endsWith('-bin') ? e.binary : e.value);
  return md;
}

interface Pending {
  method: UnaryMethod;
  request: object;
  metadata: grpc.Metadata;
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

interface Encoded extends Pending {
  bytes: Buffer;
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * One client channel's calls, gathered until the end of the event loop's turn (setImmediate runs after the turn's
 * I/O callbacks: every request a server read in that turn has made its call by then). Calls are grouped by their
 * time budget, so a batch's deadline is every one of its calls' own (to the millisecond that separates them).
 */
export class CallBatcher {
  private readonly waiting = new Map<number, Pending[]>();
  private scheduled = false;
  /** Set when the server answered UNIMPLEMENTED to a batch (a service not yet updated): calls go alone from then on. */
  private unsupported = false;

  constructor(private readonly channel: Channel) {}

  call(method: UnaryMethod, request: object, metadata: grpc.Metadata, budgetMs: number): Promise<unknown> {
    const deadline = Date.now() + budgetMs;
    if (this.unsupported) return unaryCall(this.channel, method, request, metadata, deadline);
    return new Promise((resolve, reject) => {
      let group = this.waiting.get(budgetMs);
      if (!group) this.waiting.set(budgetMs, (group = []));
      group.push({ method, request, metadata, deadline, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = [...this.waiting.values()];
    this.waiting.clear();
    for (const group of groups) {
      if (group.length === 1) this.alone(group[0]);
      else this.send(group);
    }
  }

  private alone(p: Pending): void {
    unaryCall(this.channel, p.method, p.request, p.metadata, p.deadline).then(p.resolve, p.reject);
  }

  private send(group: Pending[]): void {
    // Encoded here, as a call alone encodes its request: one that fails fails alone, as it would.
    const encoded: Encoded[] = [];
    for (const p of group) {
      try {
        encoded.push({ ...p, bytes: p.method.requestSerialize(p.request) });
      } catch (err) {
        p.reject(
          serviceError({
            code: grpc.status.INTERNAL,
            details: `Request message serialization failure: ${errorMessage(err)}`,
            metadata: new grpc.Metadata(),
          }),
        );
      }
    }
    let batch: Encoded[] = [];
    let bytes = 0;
    for (const e of encoded) {
      if (batch.length === MAX_CALLS_PER_BATCH || (batch.length > 0 && bytes + e.bytes.length > MAX_BATCH_REQUEST_BYTES)) {
        this.dispatch(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(e);
      bytes += e.bytes.length;
    }
    this.dispatch(batch);
  }

  private dispatch(batch: Encoded[]): void {
    if (batch.length === 1) this.alone(batch[0]);
    else if (batch.length > 1) this.run(batch);
  }

  private run(batch: Encoded[]): void {
    const method = callBatchMethod();
    const settled = new Array<boolean>(batch.length).fill(false);
    let answered = 0;
    const settle = (i: number, fn: () => void) => {
      if (settled[i]) return;
      settled[i] = true;
      answered++;
      fn();
    };
    const call = this.channel.createCall(method.path, Math.max(...batch.map((b) => b.deadline)), undefined, null, undefined);
    call.start(new grpc.Metadata(), {
      onReceiveMetadata() {},
      onReceiveMessage: (message: Buffer) => {
        let results: common.BatchedCallResult__Output[];
        try {
          results = method.responseDeserialize(message).results;
        } catch (err) {
          call.cancelWithStatus(grpc.status.INTERNAL, `Response message parsing error: ${errorMessage(err)}`);
          return;
        }
        for (const result of results) {
          const b = batch[result.index];
          if (!b) continue;
          settle(result.index, () => {
            if (result.code !== grpc.status.OK) {
              b.reject(serviceError({ code: result.code, details: result.details, metadata: metadataOf(result.metadata) }));
              return;
            }
            try {
              b.resolve(b.method.responseDeserialize(result.response));
            } catch (err) {
              b.reject(
                serviceError({
                  code: grpc.status.INTERNAL,
                  details: `Response message parsing error: ${errorMessage(err)}`,
                  metadata: new grpc.Metadata(),
                }),
              );
            }
          });
        }
        call.startRead();
      },
      onReceiveStatus: (status: grpc.StatusObject) => {
        if (status.code === grpc.status.UNIMPLEMENTED && answered === 0) {
          // A server without batches ran none of them: each goes again alone, and so do later calls.
          this.unsupported = true;
          for (const b of batch) this.alone(b);
          return;
        }
        // The batch ended (a lost connection, the deadline) before these calls' results came: each fails as a call
        // alone would have.
        const failure =
          status.code === grpc.status.OK
            ? { code: grpc.status.INTERNAL, details: "The server ended a batch without a call's result", metadata: status.metadata }
            : status;
        batch.forEach((b, i) => settle(i, () => b.reject(serviceError(failure))));
      },
    });
    call.startRead();
    call.sendMessageWithContext(
      {},
      method.requestSerialize({ calls: batch.map((b) => ({ method: b.method.path, request: b.bytes, metadata: entriesOf(b.metadata) })) }),
    );
    call.halfClose();
  }
}

/** A unary handler the server runs, with its codecs: what serving a batched call needs. */
export interface ServedMethod {
  handler: grpc.handleUnaryCall<unknown, unknown>;
  requestDeserialize: (bytes: Buffer) => unknown;
  responseSerialize: (value: unknown) => Buffer;
}

/**
 * The server's side: each call of the batch is run by the same handler (the credential check, span and metrics
 * included) the server runs for that call made alone, given a call object with the batched call's request and
 * metadata; each result is written at the end of the turn it became known in.
 */
export function serveCallBatch(server: grpc.Server, methods: ReadonlyMap<string, ServedMethod>): void {
  const def = batchDef();
  server.addService(def.service, {
    Run: (call: grpc.ServerWritableStream<common.CallBatchRequest__Output, common.BatchedCallResults>) => {
      const calls = call.request.calls;
      if (calls.length > MAX_CALLS_PER_BATCH) {
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `A batch carries at most ${MAX_CALLS_PER_BATCH} calls` });
        return;
      }
      let left = calls.length;
      if (left === 0) return void call.end();
      // Results known in the same turn (database answers read together) go out in one message.
      let ready: common.BatchedCallResult[] = [];
      const flush = () => {
        const results = ready;
        ready = [];
        // A batch the client gave up on (its deadline, a lost connection) takes no more writes; its calls still run.
        if (!call.cancelled) call.write({ results });
        left -= results.length;
        if (left === 0) call.end();
      };
      const finish = (index: number, result: Omit<common.BatchedCallResult, 'index'>) => {
        if (ready.push({ index, ...result }) === 1) setImmediate(flush);
      };
      calls.forEach((c, index) => {
        const served = methods.get(c.method);
        if (!served) return finish(index, { code: grpc.status.UNIMPLEMENTED, details: `The server does not implement the method ${c.method}` });
        let request: unknown;
        try {
          request = served.requestDeserialize(c.request);
        } catch (err) {
          return finish(index, { code: grpc.status.INTERNAL, details: `Error deserializing request: ${errorMessage(err)}` });
        }
        const single = {
          request,
          metadata: metadataOf(c.metadata),
          cancelled: false,
          getDeadline: () => call.getDeadline(),
          getPeer: () => call.getPeer(),
          getPath: () => c.method,
        } as unknown as grpc.ServerUnaryCall<unknown, unknown>;
        served.handler(single, (err, value) => {
          if (err)
            return finish(index, {
              code: err.code ?? grpc.status.UNKNOWN,
              details: err.details ?? (err as { message?: string }).message ?? '',
              metadata: entriesOf(err.metadata),
            });
          let response: Buffer;
          try {
            response = served.responseSerialize(value);
          } catch (e) {
            return finish(index, { code: grpc.status.INTERNAL, details: `Server failed to serialize response: ${errorMessage(e)}` });
          }
          finish(index, { code: grpc.status.OK, response });
        });
      });
    },
  });
}
