import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { ServiceName, Services } from '@crm/proto-types';
import type { CallContext, OrgContext } from './context';
import type { MethodsOf } from './methods-of';
import type { OrgFreeMethodIn } from './org-free';

/**
 * A loaded service's constructor that remembers, for the compiler only, which generated definition it came from
 * (`serviceDefinition(pkg, 'crm.v1.CrmService')` gives `ServiceConstructor<crm.CrmServiceDefinition>`), so the
 * server and client built from it know every method's request and response types.
 */
export interface ServiceConstructor<S> extends grpc.ServiceClientConstructor {
  /** Never set: it only carries `S` to the compiler. */
  readonly __definition?: S;
}

// MethodDefinition<what a sender passes, what a replier passes, what the server decodes, what the client decodes>.
type Parts<D> =
  D extends MethodDefinition<infer ReqIn, infer ResIn, infer ReqOut, infer ResOut>
    ? { reqIn: ReqIn; resIn: ResIn; reqOut: ReqOut; resOut: ResOut }
    : never;

/**
 * What the encoder accepts for a message: its input type with `null` allowed wherever a value may be left out.
 * proto-loader encodes with protobufjs' `fromObject`, which treats a null field as unset (a proto3 `optional`
 * field then stays absent, any other field decodes as its default), so `assignedUserId: null` from a row is exact.
 */
export type Encodable<T> = T extends readonly (infer E)[] ? Encodable<E>[] : T extends object ? { [K in keyof T]?: Encodable<T[K]> | null } : T;

/** The request as a handler receives it: decoded, defaults filled in, proto3 `optional` fields possibly absent. */
export type RequestOf<D> = Parts<D>['reqOut'];
/** What a handler may answer: any object the response message encodes from (unset fields go out as defaults). */
export type ReplyOf<D> = Encodable<Parts<D>['resIn']>;
/** What a caller may send. */
export type RequestInputOf<D> = Encodable<Parts<D>['reqIn']>;
/** The response as a caller receives it, decoded like a request on the server. */
export type ResponseOf<D> = Parts<D>['resOut'];

/**
 * A unary handler: request in, response out; throw AppError for anything a client should see. `Ctx` is an
 * `OrgContext` except for the org-free methods (org-free.ts).
 */
export type Handler<Req, Res, Ctx extends CallContext = OrgContext> = (req: Req, ctx: Ctx) => Promise<Res>;

/**
 * One handler per method of service `S`, each typed by the method's generated messages; the org-free methods
 * (org-free.ts) get a plain `CallContext`, the others one whose org the server checked.
 */
export type TypedHandlers<S> = {
  [M in keyof MethodsOf<S>]: Handler<RequestOf<S[M]>, ReplyOf<S[M]>, M extends OrgFreeMethodIn<S> ? CallContext : OrgContext>;
};

export interface CallOptions {
  deadlineMs?: number;
}

/**
 * Refuses a `View` that is not a widening of the decoded response: a caller may name a narrower interface it
 * reads the answer through (`ListContacts<{ data: Contact[] }>`) only when the generated type fits it.
 */
type ViewOf<Res, View> = [Res] extends [View] ? unknown : { 'the response type does not fit the requested view': Res };

/**
 * A promise-returning unary call carrying the caller's context as metadata. `View` (by default the decoded response)
 * lets a caller read the answer through its own narrower interface; it is checked, not cast.
 */
export type UnaryCall<Req, Res> = <View = Res>(
  req: Req & ViewOf<Res, View>,
  ctx?: Partial<CallContext>,
  opts?: CallOptions,
) => Promise<NoInfer<View>>;

/** A client for service `S`: every method promisified and typed by its generated messages. */
export type ServiceClient<S> = { [M in keyof MethodsOf<S>]: UnaryCall<RequestInputOf<S[M]>, ResponseOf<S[M]>> } & {
  close(): void;
  raw: grpc.Client;
};

/** The handlers of a service named as in proto (`HandlersFor<'crm.v1.CrmService'>`). */
export type HandlersFor<N extends ServiceName> = TypedHandlers<Services[N]>;

/** A client of a service named as in proto (`ClientFor<'identity.v1.IdentityService'>`). */
export type ClientFor<N extends ServiceName> = ServiceClient<Services[N]>;

export type { ServiceName, Services } from '@crm/proto-types';
