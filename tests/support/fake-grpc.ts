import { AppError, type ServiceConstructor, type TypedHandlers } from '@crm/grpc-kit';

/**
 * A fake service's handlers: the ones given (typed by the service's generated messages), and for every other
 * method of the loaded contract one that refuses with `kind`, naming the method, so an unexpected call shows up.
 */
export function withUnfaked<S>(
  ctor: ServiceConstructor<S>,
  some: Partial<TypedHandlers<S>>,
  refusal: (method: string) => AppError = (method) => new AppError('failed_precondition', `${method} is not faked`),
): TypedHandlers<S> {
  const all: Record<string, unknown> = { ...some };
  for (const method of Object.keys(ctor.service)) all[method] ??= async () => Promise.reject(refusal(method));
  // Every method of the loaded service has a handler now; the given ones were type-checked as `some`.
  return all as TypedHandlers<S>;
}
