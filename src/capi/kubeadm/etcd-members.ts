// What the KubeadmControlPlane controller asks of a workload cluster's stacked etcd, as Cluster
// API's etcd client does (controlplane/kubeadm/internal/etcd): each control-plane machine runs a
// member named as its Node, serving clients on https://<machine IP>:2379 with certificates from
// the cluster's etcd CA (`<cluster>-etcd`). The management cluster reaches the machines'
// addresses directly (the local cloud's machines live on loopback), so it dials a member with a
// client certificate that CA signed — where Cluster API tunnels through the API server to the
// etcd pod. Here: inspect one member (its ID, the leader it follows, the member list it sees, its
// alarms), remove a member, move the leadership, and the quorum rule of remediation. The rule is
// pure; the rest talks to etcd.
import type { Etcd3 } from 'etcd3';
import { BosunError } from '../../common/errors.js';
import { type KeyPair, issueClientCert } from '../../common/pki.js';

/** The port kubeadm's etcd serves clients on. */
export const ETCD_CLIENT_PORT = 2379;
/** How long one call to a member may take. */
const CALL_TIMEOUT_MS = 3_000;

export const etcdClientUrl = (address: string) => `https://${address.includes(':') ? `[${address}]` : address}:${ETCD_CLIENT_PORT}`;

export interface EtcdMember {
  /** The member's ID, as etcd prints it (decimal). */
  id: string;
  /** kubeadm names the member as its Node. */
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

/** What one member says: who it is, whom it follows, the members it knows, its alarms. */
export interface MemberReport {
  endpoint: string;
  memberId: string;
  leaderId: string;
  members: EtcdMember[];
  /** Alarm names raised on this member (NOSPACE, CORRUPT). */
  alarms: string[];
  /** Errors the member reports about itself (status.errors). */
  errors: string[];
}

/** A member that could not be reached or asked. */
export class EtcdUnreachable extends BosunError {
  constructor(readonly endpoint: string, message: string) {
    super('EtcdUnreachable', message);
  }
}

/**
 * A client of a workload cluster's etcd: one connection per call, to exactly the member asked
 * (each machine's member is judged by what it says itself). The client certificate is issued
 * once per etcd CA.
 */
export class EtcdAccess {
  private certificate?: { caPem: string; cert: Promise<KeyPair> };

  constructor(private readonly commonName = 'cluster-api-kubeadm-control-plane') {}

  private clientCert(ca: KeyPair): Promise<KeyPair> {
    if (this.certificate?.caPem !== ca.certPem) this.certificate = { caPem: ca.certPem, cert: issueClientCert(ca, { commonName: this.commonName }) };
    return this.certificate.cert;
  }

  private async withMember<T>(ca: KeyPair, endpoint: string, call: (client: Etcd3) => Promise<T>): Promise<T> {
    // etcd's client (gRPC, protobufs: some 25 MiB) is loaded at the first call, not by every cluster-api-controllers.
    const { Etcd3 } = await import('etcd3');
    const cert = await this.clientCert(ca);
    const client = new Etcd3({
      hosts: [endpoint],
      credentials: { rootCertificate: Buffer.from(ca.certPem), certChain: Buffer.from(cert.certPem), privateKey: Buffer.from(cert.keyPem) },
      dialTimeout: CALL_TIMEOUT_MS,
      // One member, one try: a member that does not answer is what is being found out.
      faultHandling: { host: () => passThrough, global: passThrough } as never,
      defaultCallOptions: () => ({ deadline: Date.now() + CALL_TIMEOUT_MS }),
    });
    try {
      return await call(client);
    } catch (e) {
      throw new EtcdUnreachable(endpoint, `etcd at ${endpoint}: ${(e as Error).message}`);
    } finally {
      client.close();
    }
  }

  /** What the member at `endpoint` says about itself and the cluster. */
  inspect(ca: KeyPair, endpoint: string): Promise<MemberReport> {
    return this.withMember(ca, endpoint, async (client) => {
      const status = await client.maintenance.status();
      const list = await client.cluster.memberList({ linearizable: true });
      const alarms = await client.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' } as never);
      const memberId = String(status.header.member_id);
      return {
        endpoint,
        memberId,
        leaderId: String(status.leader),
        members: list.members.map((m) => ({ id: String(m.ID), name: m.name, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: Boolean(m.isLearner) })),
        alarms: (alarms.alarms ?? []).filter((a) => String(a.memberID) === memberId).map((a) => String(a.alarm).toUpperCase()),
        errors: status.errors ?? [],
      };
    });
  }

  /** Removes member `id`, asking each of `endpoints` in turn until one does it. */
  async removeMember(ca: KeyPair, endpoints: string[], id: string): Promise<void> {
    let last: Error | undefined;
    for (const endpoint of endpoints) {
      try {
        await this.withMember(ca, endpoint, (client) => client.cluster.memberRemove({ ID: id }));
        return;
      } catch (e) {
        if (/member not found/i.test((e as Error).message)) return;
        last = e as Error;
      }
    }
    throw last ?? new EtcdUnreachable('', 'no etcd member to ask');
  }

  /** Moves the leadership from the leader at `leaderEndpoint` to member `targetId` (only the leader may be asked). */
  async moveLeader(ca: KeyPair, leaderEndpoint: string, targetId: string): Promise<void> {
    await this.withMember(ca, leaderEndpoint, (client) => client.maintenance.moveLeader({ targetID: targetId }));
  }
}

/** The etcd3 client's fault-handling policy, reduced to calling once. */
const passThrough = {
  onSuccess: () => ({ dispose: () => undefined }),
  onFailure: () => ({ dispose: () => undefined }),
  execute: <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T) => fn({ signal: new AbortController().signal }),
};

/**
 * Whether etcd keeps quorum without the member named `removing` (Cluster API's
 * canSafelyRemoveEtcdMember): of the members left, the healthy ones — a member without a Machine
 * counts as unhealthy — must be a majority of what is left.
 */
export function keepsQuorumWithout(members: Array<Pick<EtcdMember, 'name'> & Partial<Pick<EtcdMember, 'isLearner'>>>, healthy: (memberName: string) => boolean, removing: string): { ok: boolean; left: number; healthy: number; quorum: number } {
  // A learner (a joining member not yet promoted) does not vote: quorum is among the voters.
  const left = members.filter((m) => m.name !== removing && !m.isLearner);
  const quorum = Math.floor(left.length / 2) + 1;
  const healthyLeft = left.filter((m) => healthy(m.name)).length;
  return { ok: healthyLeft >= quorum, left: left.length, healthy: healthyLeft, quorum };
}
