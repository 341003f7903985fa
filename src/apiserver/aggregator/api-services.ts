// What kube-aggregator decides from APIService objects, as pure functions: which group-versions
// another server answers (service-backed APIServices), the groups discovery lists for them
// (versions ordered by versionPriority, groups by groupPriorityMinimum), and where a request goes —
// an address of the Service's endpoints for the service port (the aggregator's endpoint routing),
// else its cluster IP.
import type * as api from '../../api/index.js';
import { compareKubeVersions } from '../registry/registry.js';

/** The APIService that names another server for `group`/`version`, if any. */
export function serviceBackedFor(apiServices: api.APIService[], group: string, version: string): api.APIService | undefined {
  return apiServices.find((s) => s.spec?.service && s.spec.group === group && s.spec.version === version);
}

/** The groups the APIServices add to discovery (service-backed ones), versions preferred first. */
export function aggregatedGroups(apiServices: api.APIService[]): Array<{ name: string; versions: string[] }> {
  const byGroup = new Map<string, api.APIService[]>();
  for (const s of apiServices) {
    const group = s.spec?.group;
    if (!s.spec?.service || !group || !s.spec.version) continue;
    byGroup.set(group, [...(byGroup.get(group) ?? []), s]);
  }
  const priority = (list: api.APIService[]) => Math.max(...list.map((s) => s.spec?.groupPriorityMinimum ?? 0));
  return [...byGroup.entries()]
    .sort(([a, x], [b, y]) => priority(y) - priority(x) || a.localeCompare(b))
    .map(([name, list]) => ({
      name,
      versions: list
        .sort((x, y) => (y.spec?.versionPriority ?? 0) - (x.spec?.versionPriority ?? 0) || compareKubeVersions(x.spec?.version ?? '', y.spec?.version ?? ''))
        .map((s) => s.spec?.version ?? ''),
    }));
}

export interface Target {
  host: string;
  port: number;
  /** The name the server's certificate must carry: `<service>.<namespace>.svc`. */
  serverName: string;
}

/**
 * Where the APIService's requests go: the first ready endpoint address with the port that serves
 * the service port, else the Service's cluster IP and port. Throws a message when there is none.
 */
export function resolveTarget(apiService: api.APIService, service: api.Service | undefined, endpoints: api.Endpoints | undefined): Target {
  const ref = apiService.spec?.service;
  if (!ref) throw new Error(`APIService ${apiService.metadata.name} is served locally`);
  return resolveServiceTarget({ namespace: ref.namespace ?? '', name: ref.name ?? '', port: ref.port }, service, endpoints);
}

/**
 * Where a request for a Service reference goes (an APIService's, an admission webhook's), as kube's
 * endpoint routing resolves it: the first endpoint address with the port that serves the service
 * port (443 unless said), else the Service's cluster IP. Throws a message when there is none.
 */
export function resolveServiceTarget(ref: { namespace: string; name: string; port?: number }, service: api.Service | undefined, endpoints: api.Endpoints | undefined): Target {
  const serverName = `${ref.name}.${ref.namespace}.svc`;
  const wanted = ref.port ?? 443;
  if (!service) throw new Error(`service/${ref.name} in "${ref.namespace}" is not present`);
  const servicePort = (service.spec?.ports ?? []).find((p) => p.port === wanted);
  if (!servicePort) throw new Error(`service/${ref.name} in "${ref.namespace}" has no port ${wanted}`);
  for (const subset of endpoints?.subsets ?? []) {
    const port = (subset.ports ?? []).find((p) => (servicePort.name ? p.name === servicePort.name : true));
    const address = subset.addresses?.[0]?.ip;
    if (port && address) return { host: address, port: port.port, serverName };
  }
  const clusterIP = service.spec?.clusterIP;
  // No Endpoints object at all: the cluster IP (where the nodes' service proxies answer).
  if (endpoints === undefined && clusterIP && clusterIP !== 'None') return { host: clusterIP, port: wanted, serverName };
  throw new Error(`service/${ref.name} in "${ref.namespace}" has no endpoints`);
}
