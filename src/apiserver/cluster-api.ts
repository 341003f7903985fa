// The API server as a cluster runs it: the server plus what kube-apiserver and
// kube-controller-manager add around it — RBAC and ServiceAccount tokens, evictions with
// disruption budgets, garbage collection, node credentials and restrictions, the CSR signer, and
// the audit log. Used by `bosun apiserver` and `bosun start`.
import { join } from 'node:path';
import { createCA, loadOrCreate } from '../common/pki.js';
import { startApiServer, type ApiServer, type ApiServerOptions } from './server.js';
import { enableCsrSigning } from './certificates/signing-controller.js';
import { enableNodeAccess } from './nodes/node-access.js';
import { enableAccessControl } from './access-control.js';
import { enableAudit } from './audit.js';
import { enableEvictions } from './eviction.js';
import { enableGarbageCollector } from './garbage-collector.js';

export interface ClusterApiServer {
  server: ApiServer;
  stop(): Promise<void>;
}

export async function startClusterApiServer(options: ApiServerOptions): Promise<ClusterApiServer> {
  const server = await startApiServer(options);
  // Node access first: its NodeRestriction checks of evictions and TokenRequests run before the
  // handlers that answer them, and its authorizer goes in front of RBAC.
  const nodes = enableNodeAccess(server);
  const access = await enableAccessControl(server, options.dataDir, { before: nodes.authorize });
  const evictions = enableEvictions(server);
  const gc = enableGarbageCollector(server);
  // The server has created the CA by now; the signer signs with it, as the cluster-signing CA.
  const signing = enableCsrSigning(server, await loadOrCreate(join(options.dataDir, 'pki'), 'ca', () => createCA('bosun-ca')));
  const audit = enableAudit(server, options.dataDir);
  return {
    server,
    async stop() {
      access.stop();
      nodes.stop();
      evictions.stop();
      gc.stop();
      signing.stop();
      await server.stop();
      await audit.close();
    },
  };
}
