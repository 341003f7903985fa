// The API server as a cluster runs it (not Cluster API, which is src/capi): the server plus what
// kube-apiserver and kube-controller-manager add around it — RBAC and ServiceAccount tokens,
// evictions with disruption budgets, garbage collection, node credentials and restrictions, the
// CSR signer, the bootstrap-token cleaner, and the audit log. Used by `bosun apiserver` and
// `bosun start`.
import { startApiServer, type ApiServer, type ApiServerOptions } from './server.js';
import { loadClusterCA } from './serving.js';
import { enableCsrSigning } from './certificates/signing-controller.js';
import { certificateAdmission } from './certificates/admission.js';
import { enableNodeAccess } from './nodes/node-access.js';
import { enableBootstrapTokenCleaner } from './nodes/token-cleaner.js';
import { enableAccessControl } from './auth/access-control.js';
import { enableAudit } from './filters/audit-log.js';
import { enableEvictions } from './controllers/eviction.js';
import { enableGarbageCollector } from './controllers/garbage-collection-controller.js';
import { controllersIdentity, leadControllers } from './controllers/leadership.js';

export interface ClusterServer {
  server: ApiServer;
  stop(): Promise<void>;
}

/** kube-controller-manager's --cluster-signing-duration: the longest certificate the CSR signer issues (default a year). */
export async function startClusterServer(options: ApiServerOptions & { clusterSigningDurationMs?: number }): Promise<ClusterServer> {
  const server = await startApiServer({ ...options, accessControlPending: true });
  // Node access first: its NodeRestriction checks of evictions and TokenRequests run before the
  // handlers that answer them, and its authorizer goes in front of RBAC.
  const nodes = enableNodeAccess(server);
  const access = await enableAccessControl(server, options.dataDir, { before: nodes.authorize });
  server.resources.addHooks(certificateAdmission(access.authorize));
  const evictions = enableEvictions(server, { syncStatuses: false });
  // The cluster CA is also the cluster-signing CA (kube-controller-manager's --cluster-signing-*).
  const ca = await loadClusterCA(options.dataDir);
  // kube-controller-manager's loops, in one API server of several at a time (leadership.ts).
  const controllers = leadControllers(server, controllersIdentity(options.dataDir), () => {
    const gc = enableGarbageCollector(server);
    const signing = enableCsrSigning(server, ca, { certTtlMs: options.clusterSigningDurationMs });
    const tokenCleaner = enableBootstrapTokenCleaner(server);
    const statuses = evictions.syncStatuses();
    return () => {
      gc.stop();
      signing.stop();
      tokenCleaner.stop();
      statuses.stop();
    };
  });
  const audit = enableAudit(server, options.dataDir);
  return {
    server,
    async stop() {
      // The open connections go first (with a grace period: options.shutdownGraceMs), while authentication and the rest still serve the requests in flight.
      await server.drain();
      access.stop();
      nodes.stop();
      await controllers.stop();
      evictions.stop();
      await server.stop();
      await audit.close();
    },
  };
}
