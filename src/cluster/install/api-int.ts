// The api-int load balancer: the internal address (127.0.100.1) the cluster's own machines and
// pods reach the control plane on, as OpenShift's api-int. Its listeners:
//   <api port>  → the API server, which runs on the host (the bring-up process) at its address;
//   22623/22624 → the machine-config servers: the masters' (a hostNetwork DaemonSet) and, while
//                 the cluster bootstraps, the bootstrap server on the host — which the install
//                 takes out once the masters serve, as openshift-install removes the bootstrap
//                 node from the balancers.
import type { CloudClient } from '../../cloud/client.js';
import type { LoadBalancer } from '../../cloud/types.js';
import { INFRASTRUCTURE_NAME } from './cluster-facts.js';

export const API_INT_ADDRESS = '127.0.100.1';
export const MCS_TLS_PORT = 22623;
export const MCS_HTTP_PORT = 22624;
export const API_INT_BALANCER = `${INFRASTRUCTURE_NAME}-api-int`;

export interface ApiIntTargets {
  api: { host: string; port: number };
  /** The bootstrap machine-config server's host while it serves (listening on 22623/22624). */
  bootstrapServer?: string;
  /** The masters' instance IDs. */
  masters: string[];
}

/** The balancer as it should be for these targets. */
export function apiIntBalancer(t: ApiIntTargets): Omit<LoadBalancer, 'name' | 'address' | 'createdAt' | 'updatedAt'> & { address: string } {
  const servers = [...(t.bootstrapServer ? [t.bootstrapServer] : []), ...t.masters];
  return {
    address: API_INT_ADDRESS,
    internal: true,
    // The balancer-wide targets are the masters; each listener names its own.
    targets: t.masters,
    sourceRanges: [],
    ports: [
      { name: 'api', protocol: 'TCP', port: t.api.port, targetPort: t.api.port, targets: [t.api.host] },
      ...(servers.length ? [
        { name: 'machine-config-server', protocol: 'TCP' as const, port: MCS_TLS_PORT, targetPort: MCS_TLS_PORT, targets: servers },
        { name: 'machine-config-server-http', protocol: 'TCP' as const, port: MCS_HTTP_PORT, targetPort: MCS_HTTP_PORT, targets: servers },
      ] : []),
    ],
  };
}

export function ensureApiInt(cloud: CloudClient, t: ApiIntTargets): Promise<LoadBalancer> {
  return cloud.ensureLoadBalancer(API_INT_BALANCER, apiIntBalancer(t));
}
