import * as grpc from '@grpc/grpc-js';

/** A client's channel (grpc-js exports the interface only as a client's `getChannel()` type). */
export type Channel = ReturnType<grpc.Client['getChannel']>;

/** What a unary method's definition gives: its path and its message codecs. */
export interface UnaryMethod {
  path: string;
  requestSerialize: (value: object) => Buffer;
  responseDeserialize: (bytes: Buffer) => unknown;
}

/**
 * The error grpc-js's own client gives: an Error whose message is `<code> <NAME>: <details>`, with the status fields.
 * Without a stack trace: here it could only show grpc-js's internals (where the status arrived), and capturing one
 * cost more than the rest of a failed call (a call to a service that is down fails on every request).
 */
export function serviceError(status: grpc.StatusObject): grpc.ServiceError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error = new Error(`${status.code} ${grpc.status[status.code]}: ${status.details}`);
  Error.stackTraceLimit = limit;
  return Object.assign(error, status);
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * One unary call on `channel`: what grpc-js's `Client#makeUnaryRequest` does (the same channel call, codecs, statuses
 * and errors), minus what this code base never uses: interceptors, the call's event emitter, and the caller's stack
 * that grpc-js captures on every call and formats into every error (on a call to a service that is down, formatting
 * it cost more than the rest of the call). The stack of an error here is where the status arrived.
 */
export function unaryCall(
  channel: Channel,
  method: UnaryMethod,
  request: object,
  metadata: grpc.Metadata,
  deadline: Date | number,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const call = channel.createCall(method.path, deadline, undefined, null, undefined);
    let response: unknown;
    let received = false;
    let readError: grpc.StatusObject | undefined;
    call.start(metadata, {
      onReceiveMetadata() {},
      onReceiveMessage(message: Buffer) {
        if (received) {
          call.cancelWithStatus(grpc.status.UNIMPLEMENTED, 'Too many responses received');
          return;
        }
        try {
          response = method.responseDeserialize(message);
          received = true;
        } catch (err) {
          readError = { code: grpc.status.INTERNAL, details: `Response message parsing error: ${errorMessage(err)}`, metadata: new grpc.Metadata() };
          call.cancelWithStatus(readError.code, readError.details);
        }
      },
      onReceiveStatus(status: grpc.StatusObject) {
        if (readError) reject(serviceError(readError));
        else if (status.code !== grpc.status.OK) reject(serviceError(status));
        else if (!received) reject(serviceError({ code: grpc.status.UNIMPLEMENTED, details: 'No message received', metadata: status.metadata }));
        else resolve(response);
      },
    });
    // In grpc-js's order: read, write the one message, half-close.
    call.startRead();
    let bytes: Buffer;
    try {
      bytes = method.requestSerialize(request);
    } catch (err) {
      call.cancelWithStatus(grpc.status.INTERNAL, `Request message serialization failure: ${errorMessage(err)}`);
      return;
    }
    call.sendMessageWithContext({}, bytes);
    call.halfClose();
  });
}
