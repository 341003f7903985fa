// The API server as a cluster runs it: the server plus what kube-apiserver and
// kube-controller-manager add around it — RBAC and ServiceAccount tokens, evictions with
// disruption budgets, garbage collection, and the audit log. Used by `bosun apiserver` and
// `bosun start`.
import { startApiServer, type ApiServer, type ApiServerOptions } from './server.js';
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
  const access = await enableAccessControl(server, options.dataDir);
  const evictions = enableEvictions(server);
  const gc = enableGarbageCollector(server);
  const audit = enableAudit(server, options.dataDir);
  return {
    server,
    async stop() {
      access.stop();
      evictions.stop();
      gc.stop();
      await server.stop();
      await audit.close();
    },
  };
}
