import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventBus, fakeConnector } from '../messaging/support';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { org } from './support';

/** What `automationWithMessaging` starts. */
export interface AutomationWithMessaging {
  stack: Stack;
  /** messaging's event exchange: inbound messages as the connector announces them, and what the services publish. */
  bus: Awaited<ReturnType<typeof eventBus>>;
  connector: Awaited<ReturnType<typeof fakeConnector>>;
  owner: Client;
  orgId: string;
  stop(): Promise<void>;
}

/**
 * crm, messaging and automation behind the gateway, messaging against a fake connector, and one org: the stack of
 * automation actions that act on conversations (assign_round_robin, set_priority, ...). Rule runs are polled every 100 ms.
 * `messagingEnv` adds to messaging's environment.
 */
export async function automationWithMessaging(name: string, messagingEnv: Record<string, string> = {}): Promise<AutomationWithMessaging> {
  const dir = mkdtempSync(path.join(tmpdir(), `automation-${name}-`));
  const connector = await fakeConnector();
  const stack = await startStack({
    services: ['crm', 'messaging', 'automation'],
    serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, ATTACHMENTS_DIR: dir, ...messagingEnv }, automation: { RUN_POLL_MS: '100' } },
  });
  const bus = await eventBus(stack);
  const a = await org(stack, 'Acme');
  return {
    stack,
    bus,
    connector,
    owner: a.owner,
    orgId: a.orgId,
    async stop() {
      await bus.close();
      await stack.stop();
      await connector.down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
