import path from 'node:path';
import protobuf from 'protobufjs';
import { z } from 'zod';
import { protoRoot } from '@crm/grpc-kit';
import { BACKENDS, type BackendName } from '../clients';

/**
 * A zod schema for a proto message as the gateway receives it from a service and forwards it as JSON: the
 * repository's one set of proto-loader options (grpc-kit LOADER_OPTIONS) decides the shape, so it is mirrored
 * here: field names as written, enums as their names, 64-bit integers as numbers, unset scalars and lists
 * present with their defaults, unset messages null, proto3 `optional` fields absent when unset.
 * Routes that return a service's answer untouched are documented from the same proto the service speaks.
 */
const roots = new Map<string, protobuf.Root>();

function rootOf(file: string): protobuf.Root {
  let root = roots.get(file);
  if (!root) {
    const dir = protoRoot();
    root = new protobuf.Root();
    root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(dir, target));
    root.loadSync(file, { keepCase: true });
    root.resolveAll();
    roots.set(file, root);
  }
  return root;
}

const INTEGER = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function scalar(type: string): z.ZodType {
  if (INTEGER.has(type)) return z.number().int();
  if (type === 'double' || type === 'float') return z.number();
  if (type === 'bool') return z.boolean();
  if (type === 'string') return z.string();
  // bytes arrive as a Buffer; no route forwards one as JSON today.
  return z.unknown();
}

function valueOf(field: protobuf.Field, depth: number): z.ZodType {
  const t = field.resolvedType;
  if (t instanceof protobuf.Enum) return z.enum(Object.keys(t.values) as [string, ...string[]]);
  if (t instanceof protobuf.Type) return depth > 6 ? z.looseObject({}) : messageOf(t, depth + 1);
  return scalar(field.type);
}

function messageOf(type: protobuf.Type, depth: number): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const field of type.fieldsArray) {
    let s: z.ZodType;
    if (field instanceof protobuf.MapField) s = z.record(z.string(), valueOf(field, depth));
    else if (field.repeated) s = z.array(valueOf(field, depth));
    else {
      s = valueOf(field, depth);
      // defaults: true fills an unset message field with null.
      if (field.resolvedType instanceof protobuf.Type && !isProto3Optional(field)) s = s.nullable();
    }
    shape[field.name] = isProto3Optional(field) ? s.optional() : s;
  }
  return z.object(shape);
}

function isProto3Optional(field: protobuf.Field): boolean {
  return Boolean((field.options as Record<string, unknown> | undefined)?.proto3_optional) || Boolean(field.partOf?.name.startsWith('_'));
}

/** `proto('crm/v1/crm.proto', 'crm.v1.ContactStatus')`. */
export function proto(file: string, message: string): z.ZodObject {
  return messageOf(rootOf(file).lookupType(message), 0);
}

/**
 * The answer of a backend's RPC, e.g. `reply('identity', 'GetProfile')`: what a route that forwards the
 * service's answer untouched returns.
 */
export function reply(backend: BackendName, method: string): z.ZodObject {
  const b = BACKENDS[backend];
  const service = rootOf(b.proto).lookupService(b.service);
  const rpc = service.methods[method];
  if (!rpc) throw new Error(`${b.service} has no RPC ${method}`);
  rpc.resolve();
  return messageOf(rpc.resolvedResponseType!, 0);
}

/** `reply(...).data` items: for routes that answer a service's list as a bare array. */
export function replyItem(backend: BackendName, method: string, field = 'data'): z.ZodObject {
  const list = reply(backend, method).shape[field];
  if (!(list instanceof z.ZodArray) || !(list.element instanceof z.ZodObject)) throw new Error(`${method}.${field} is not a list of messages`);
  return list.element;
}

/** Optional fields the route spells out as null (`x ?? null`): present, null when unset. */
export function nulls<T extends z.ZodObject>(schema: T, keys: string[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const k of keys) {
    const f = schema.shape[k] as z.ZodType | undefined;
    if (!f) throw new Error(`no field ${k} to make nullable`);
    shape[k] = (f instanceof z.ZodOptional ? (f.unwrap() as z.ZodType) : f).nullable();
  }
  return schema.extend(shape);
}
