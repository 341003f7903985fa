// The cloud-controller-manager: the controllers of k8s.io/cloud-provider (cloud-node,
// cloud-node-lifecycle, service, route) added to a component manager over its shared informers
// and one cloud provider made by name from the cloud config, as `bosun cloud-controller-manager`
// and tests run it. The manager holds the Lease kube-system/cloud-controller-manager (upstream's).
import { EventRecorder, type Manager, type Runnable } from '../kube/index.js';
import { type CloudProvider, initCloudProvider } from './cloud-provider.js';
import { type CcmContext, NODES, SERVICES } from './context.js';
import { cloudNodeController } from './node-controller.js';
import { cloudNodeLifecycleController } from './node-lifecycle-controller.js';
import { routeController } from './route-controller.js';
import { serviceController } from './service-controller.js';
import { ServiceControllerMetrics } from './metrics.js';
import './local-provider.js';

export const CLOUD_CONTROLLER_MANAGER = { name: 'cloud-controller-manager', lease: { namespace: 'kube-system', name: 'cloud-controller-manager' } };

export interface CcmSettings {
  cloudProvider: string;
  /** The text of --cloud-config. */
  cloudConfig?: string;
  /** --cloud-credentials-file: the provider's cloud credential (its CredentialsRequest's Secret, mounted). */
  cloudCredentialsFile?: string;
  controllers?: CcmControllerName[];
  /** --cluster-name: prefixes the cluster's balancers and routes in the cloud. */
  clusterName?: string;
  /** --cluster-cidr: stale routes are removed only inside it. */
  clusterCidr?: string;
  /** --configure-cloud-routes (default true): without it the route controller does not run. */
  configureCloudRoutes?: boolean;
  /** Shorter periods for tests. */
  periods?: { nodeStatusMs?: number; nodeMonitorMs?: number; routesMs?: number };
}

type Make = (ctx: CcmContext, s: CcmSettings) => Runnable;

/** Upstream's controller names for --controllers. */
export const CCM_CONTROLLERS: Record<'cloud-node' | 'cloud-node-lifecycle' | 'service' | 'route', Make> = {
  'cloud-node': (ctx, s) => cloudNodeController(ctx, s.periods?.nodeStatusMs),
  'cloud-node-lifecycle': (ctx, s) => cloudNodeLifecycleController(ctx, s.periods?.nodeMonitorMs),
  service: (ctx) => serviceController(ctx),
  route: (ctx, s) => routeController(ctx, s.clusterCidr, s.periods?.routesMs),
};
export type CcmControllerName = keyof typeof CCM_CONTROLLERS;

/** kube's --controllers syntax: `*` all, `name` one more, `-name` one less; unknown names refused. */
export function selectCcmControllers(spec: string): CcmControllerName[] {
  const known = Object.keys(CCM_CONTROLLERS) as CcmControllerName[];
  const items = spec.split(',').map((s) => s.trim()).filter(Boolean);
  const chosen = new Set<CcmControllerName>(items.includes('*') ? known : []);
  for (const item of items.filter((i) => i !== '*')) {
    const name = item.replace(/^-/, '') as CcmControllerName;
    if (!known.includes(name)) throw new Error(`"${name}" is not a known controller; known controllers: ${known.join(', ')}`);
    if (item.startsWith('-')) chosen.delete(name);
    else chosen.add(name);
  }
  return known.filter((n) => chosen.has(n));
}

/** Makes the provider and adds the selected controllers to the manager; returns the provider. */
export async function addCloudControllers(manager: Manager, settings: CcmSettings): Promise<CloudProvider> {
  const cloud = await initCloudProvider(settings.cloudProvider, settings.cloudConfig, { credentialsFile: settings.cloudCredentialsFile });
  let names = settings.controllers ?? (Object.keys(CCM_CONTROLLERS) as CcmControllerName[]);
  // As upstream: routes are only configured when asked to and the provider has them.
  if (settings.configureCloudRoutes === false) names = names.filter((n) => n !== 'route');
  const ctx: CcmContext = {
    client: manager.client,
    get nodes() { return manager.informers.forResource(NODES); },
    get services() { return manager.informers.forResource(SERVICES); },
    cloud,
    clusterName: settings.clusterName ?? 'kubernetes',
    events: (component) => new EventRecorder(manager.client, { component, clock: manager.clock }),
    clock: manager.clock,
    metrics: new ServiceControllerMetrics(),
  };
  manager.addMetrics(ctx.metrics.registry);
  const stopped = new AbortController();
  manager.add({ name: 'cloud-provider', needsLeaderElection: false, start: () => cloud.initialize(stopped.signal), stop: () => stopped.abort() });
  for (const name of names) manager.add(CCM_CONTROLLERS[name](ctx, settings));
  return cloud;
}
