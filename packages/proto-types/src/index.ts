/**
 * Types for every message and service of proto/, one namespace per proto package (`crm.Contact__Output`,
 * `common.IdRequest`). `X` is what a sender may pass (fields optional, numbers or strings for 64-bit values),
 * `X__Output` what a receiver gets after decoding (defaults filled in, proto3 `optional` fields possibly absent).
 * `Services` maps each service's full name to its definition, which grpc-kit turns into typed handlers and clients.
 */
export * from './generated';
