/**
 * One SSRF guard for every connection whose destination a tenant chooses: webhook URLs, AI base URLs and
 * chat-network proxies. The address policy says which IPs may be dialled; the guard applies it where the
 * address is chosen (see guard.ts).
 */
export { type AddressVerdict, type AllowList, isIpLiteral, judgeAddress, parseAllowList } from './address-policy';
export {
  AddressGuard,
  canonicalHost,
  type GuardOptions,
  type LookupCallback,
  RefusedAddressError,
  type Resolver,
  type SaveCheck,
  systemResolver,
} from './guard';
export { allowListEnv } from './env';
