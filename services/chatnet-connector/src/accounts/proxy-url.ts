import { invalid, traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { AddressGuard } from '@crm/net-guard';

// The URL's form is a contract rule (@crm/validation connectorRules.proxyUrl); where its host may be is the connector's.

/** How long saving a proxy waits for its host to resolve. */
const RESOLVE_TIMEOUT_MS = 3_000;

/**
 * The proxy's host must be a public address (or one in CONNECTOR_ALLOWED_PRIVATE_ADDRESSES): a proxy on a
 * private, loopback or link-local address would make the connector dial into its own network for a tenant.
 * Checked when saved (400 naming `proxyUrl`) and, for the real driver, again when dialling (drivers/proxy-dialer.ts).
 * A host that does not resolve now is accepted: DNS may not be set up yet.
 */
export async function checkProxyHost(guard: AddressGuard, log: Logger, proxyUrl: string, call: { traceparent?: string } = {}): Promise<void> {
  const host = new URL(proxyUrl).hostname;
  const check = await guard.checkOnSave(host, RESOLVE_TIMEOUT_MS);
  if ('refused' in check) throw invalid('proxyUrl', check.refused);
  if ('unresolved' in check) log.info({ host, err: check.unresolved, ...traceFields(call) }, 'proxy host does not resolve now; accepted');
}
