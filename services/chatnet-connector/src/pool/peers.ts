import { type ClientFor, createServiceClient, type GrpcTransport, InternalAuth, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { fromPeerError, notLive } from './remote-errors';
import type { Leases } from './leases';

type PeerClient = ClientFor<'connector.v1.ConnectorPeerService'>;

/**
 * Calls that need the live session (send, sandbox network pushes, release) run on the instance holding
 * the account's lease. Each instance registers its gRPC address in Redis next to its leases; a call that
 * arrives elsewhere is forwarded there over gRPC (ConnectorPeerService) and its answer passed back.
 */
export class Peers {
  private readonly clients = new Map<string, PeerClient>();
  private readonly ctor = serviceDefinition(loadProto('connector/v1/connector.proto'), 'connector.v1.ConnectorPeerService');

  constructor(
    private readonly leases: Leases,
    private readonly auth: InternalAuth,
    private readonly transport: GrpcTransport,
    private readonly deadlineMs = 8000,
  ) {}

  private client(address: string): PeerClient {
    let c = this.clients.get(address);
    if (!c) {
      c = createServiceClient(this.ctor, address, this.auth, this.deadlineMs, 'pick_first', this.transport);
      this.clients.set(address, c);
    }
    return c;
  }

  /** Run `local` when this instance holds the account, else `remote` on the holder. */
  async onHolder<T>(accountId: string, local: () => Promise<T>, remote: (peer: PeerClient) => Promise<T>): Promise<T> {
    const holder = await this.leases.holderOf(accountId);
    if (!holder) throw notLive();
    if (holder === this.leases.instanceId) return local();
    const address = await this.leases.addressOf(holder);
    if (!address) throw notLive('the connector instance holding it stopped answering');
    try {
      return await remote(this.client(address));
    } catch (err) {
      throw fromPeerError(err);
    }
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
