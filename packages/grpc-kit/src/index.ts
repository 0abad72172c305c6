export * from './errors';
export * from './context';
export * from './permissions';
export * from './proto';
export * from './server';
export * from './client';
export * from './internal-auth';
export { TokenError, type InternalClaims } from './internal-token';
export { Metadata, status } from '@grpc/grpc-js';
