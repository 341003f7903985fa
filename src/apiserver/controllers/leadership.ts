// The loops of kube-controller-manager's that bosun runs inside the API server — the garbage
// collector, the CSR signer, the bootstrap-token cleaner, PodDisruptionBudget status — run in one
// API server at a time, as kube-controller-manager runs them under leader election: with two or
// three API servers on one etcd (`bosun start --etcd`, a workload cluster's control plane) each
// did the same work, and their writes met in conflicts ("PDB status sync failed: … the object has
// been modified" through every upgrade). The Lease is kube-system/bosun-apiserver-controllers,
// read and written through the server's own registry (no client, no credentials), with
// kube-controller-manager's timings (15 s lease, 10 s renew deadline, 2 s retry). The identity is
// the host and a digest of the data directory: the same server restarted takes its Lease straight
// back instead of waiting out the one it held before (its GC and CSR signer would stand still for
// 15 s after every restart), and two servers of one host are two candidates.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { LeaderElector, type LeaseStore } from '../../kube/leader-election.js';
import { ApiError } from '../errors.js';
import { asKind } from '../kinds/strategy.js';
import type { ApiServer } from '../server.js';
import type * as api from '../../api/index.js';

const CONTROLLERS_LEASE = { namespace: 'kube-system', name: 'bosun-apiserver-controllers' };

/** The candidate name of the API server over `dataDir` (stable across its restarts). */
export function controllersIdentity(dataDir: string): string {
  return `${hostname()}_${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 12)}`;
}

/**
 * Runs `start` while this server holds the Lease; the function it returns stops what it started
 * (when leadership is lost, or at stop(), which also gives the Lease up for a successor).
 */
export function leadControllers(server: ApiServer, identity: string, start: () => () => void): { stop(): Promise<void> } {
  const type = server.registry.lookup('coordination.k8s.io', 'v1', 'leases')!;
  const leases: LeaseStore = {
    read: async (namespace, name) => {
      try {
        return asKind<api.Lease>(server.resources.get(type, namespace, name));
      } catch (e) {
        if (e instanceof ApiError && e.code === 404) return undefined;
        throw e;
      }
    },
    create: (lease) => server.resources.create(type, lease.metadata.namespace, lease, { fieldManager: 'kube-apiserver' }),
    update: (lease) => server.resources.update(type, lease.metadata.namespace, lease.metadata.name!, lease, { fieldManager: 'kube-apiserver' }),
  };
  const stopping = new AbortController();
  const elector = new LeaderElector({
    ...CONTROLLERS_LEASE,
    identity,
    leases,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    signal: stopping.signal,
    onStartedLeading: (leading) =>
      new Promise<void>((done) => {
        const stop = start();
        leading.addEventListener('abort', () => {
          stop();
          done();
        }, { once: true });
      }),
  });
  const running = elector.run();
  return {
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
