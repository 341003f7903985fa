// An API server with OLM's CRDs established, a client, and the objects OLM's tests build on.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient, Manager, type ResourceRef, loadKubeConfig, readRequestHeaderAuth, resources } from '../../src/kube/index.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { enableGarbageCollector } from '../../src/apiserver/controllers/garbage-collection-controller.js';
import { addWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { addCatalogOperator, addOlmOperator, addPackageServer } from '../../src/olm/operators.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { eventually } from '../helpers/eventually.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { createNode, startStandIns, type StandInOptions } from '../cluster/workloads/stand-ins.js';

export const MANIFESTS = new URL('../../release-payload/manifests/', import.meta.url).pathname;
export const OLM_CRDS = readdirSync(MANIFESTS).filter((f) => /^0000_50_olm_01_.*\.crd\.yaml$/.test(f));
export const OLM_CRD_NAMES = ['catalogsources', 'subscriptions', 'installplans', 'clusterserviceversions', 'operatorgroups'].map((r) => `crd/${r}.operators.coreos.com`);

export async function olmApiServer(): Promise<{ api: TestApiServer; client: KubeClient }> {
  const api = await startTestApiServer();
  // What a cluster's API server adds: RBAC with access reviews (the operators' roles are checked
  // with kubectl auth can-i; the package server asks SubjectAccessReviews) and the garbage
  // collector (what a CSV owns goes with it).
  const access = await enableAccessControl(api.server, api.dataDir);
  const gc = enableGarbageCollector(api.server);
  const stopServer = api.stop.bind(api);
  api.stop = async (options) => {
    gc.stop();
    access.stop();
    await stopServer(options);
  };
  await api.kubectlOk(['apply', ...OLM_CRDS.flatMap((f) => ['-f', join(MANIFESTS, f)])]);
  await api.kubectlOk(['wait', '--for=condition=Established', '--timeout=20s', ...OLM_CRD_NAMES]);
  return { api, client: new KubeClient(loadKubeConfig(api.kubeconfigPath)) };
}

/** The CRD the demo operator owns: widgets.demo.bosun.io. */
export const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.demo.bosun.io' },
  spec: {
    group: 'demo.bosun.io',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

export interface DemoVersion {
  version: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  installModes?: Partial<Record<'OwnNamespace' | 'SingleNamespace' | 'MultiNamespace' | 'AllNamespaces', boolean>>;
  /** The Deployment's progressDeadlineSeconds. */
  progressDeadlineSeconds?: number;
  requires?: { group: string; version: string; kind: string };
}

/** A CSV of the demo operator (package `pkg`). */
export function demoCsv(pkg: string, v: DemoVersion) {
  const modes = { OwnNamespace: true, SingleNamespace: true, MultiNamespace: false, AllNamespaces: true, ...v.installModes };
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: `${pkg}.v${v.version}`, annotations: v.skipRange ? { 'olm.skipRange': v.skipRange } : {} },
    spec: {
      displayName: `Demo ${pkg}`,
      description: 'Reconciles Widgets.',
      version: v.version,
      ...(v.replaces ? { replaces: v.replaces } : {}),
      ...(v.skips ? { skips: v.skips } : {}),
      provider: { name: 'bosun' },
      installModes: Object.entries(modes).map(([type, supported]) => ({ type, supported })),
      customresourcedefinitions: {
        owned: [{ name: 'widgets.demo.bosun.io', version: 'v1', kind: 'Widget', displayName: 'Widget' }],
        ...(v.requires ? { required: [{ name: `${v.requires.kind.toLowerCase()}s.${v.requires.group}`, version: v.requires.version, kind: v.requires.kind }] } : {}),
      },
      install: {
        strategy: 'deployment',
        spec: {
          permissions: [{ serviceAccountName: `${pkg}-operator`, rules: [{ apiGroups: ['demo.bosun.io'], resources: ['widgets', 'widgets/status'], verbs: ['*'] }] }],
          clusterPermissions: [{ serviceAccountName: `${pkg}-operator`, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }] }],
          deployments: [{
            name: `${pkg}-operator`,
            spec: {
              replicas: 1,
              ...(v.progressDeadlineSeconds ? { progressDeadlineSeconds: v.progressDeadlineSeconds } : {}),
              selector: { matchLabels: { app: `${pkg}-operator` } },
              template: { metadata: { labels: { app: `${pkg}-operator` } }, spec: { serviceAccountName: `${pkg}-operator`, containers: [{ name: 'operator', image: `example.com/${pkg}:${v.version}` }] } },
            },
          }],
        },
      },
    },
  };
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');

/** A File-Based Catalog (YAML) of the demo package `pkg` with the given versions, on channels by name. */
export function demoCatalog(pkg: string, channels: Record<string, DemoVersion[]>, defaultChannel = Object.keys(channels)[0]): string {
  const blobs: unknown[] = [{ schema: 'olm.package', name: pkg, defaultChannel }];
  const versions = new Map<string, DemoVersion>();
  for (const [name, list] of Object.entries(channels)) {
    blobs.push({ schema: 'olm.channel', package: pkg, name, entries: list.map((v) => ({ name: `${pkg}.v${v.version}`, ...(v.replaces ? { replaces: v.replaces } : {}), ...(v.skips ? { skips: v.skips } : {}), ...(v.skipRange ? { skipRange: v.skipRange } : {}) })) });
    for (const v of list) versions.set(v.version, v);
  }
  for (const v of versions.values()) {
    blobs.push({
      schema: 'olm.bundle',
      package: pkg,
      name: `${pkg}.v${v.version}`,
      image: `example.com/${pkg}-bundle:${v.version}`,
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version: v.version } },
        { type: 'olm.gvk', value: { group: 'demo.bosun.io', version: 'v1', kind: 'Widget' } },
        ...(v.requires ? [{ type: 'olm.gvk.required', value: v.requires }] : []),
        { type: 'olm.bundle.object', value: { data: b64(WIDGET_CRD) } },
        { type: 'olm.bundle.object', value: { data: b64(demoCsv(pkg, v)) } },
      ],
    });
  }
  return blobs.map((b) => `---\n${JSON.stringify(b)}\n`).join('');
}

/** OLM's operators and the workload controllers on one manager, with a scheduler and kubelet stand-in and one node. */
export async function olmCluster(standIn: StandInOptions = {}, options: { packageServer?: boolean } = {}): Promise<{ api: TestApiServer; client: KubeClient; stop(): Promise<void> }> {
  const { api, client } = await olmApiServer();
  const stopping = new AbortController();
  const manager = new Manager({ name: 'olm-test', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
  addWorkloadControllers(manager, { controllers: ['deployment', 'replicaset'] });
  addCatalogOperator(manager);
  addOlmOperator(manager);
  const served = options.packageServer ? await packageServerOn(manager, api, client) : undefined;
  const running = manager.start(stopping.signal);
  await served?.();
  const standIns = startStandIns(client, standIn);
  await createNode(client, 'node-0');
  return {
    api,
    client,
    async stop() {
      stopping.abort();
      await running.catch(() => undefined);
      await standIns.stop();
      await api.stop();
    },
  };
}

/**
 * Adds the package server to `manager` on a random port; the returned step (once the manager
 * runs) makes the APIService v1.packages.operators.coreos.com with its Service and Endpoints.
 */
export async function packageServerOn(manager: Manager, api: TestApiServer, client: KubeClient): Promise<() => Promise<void>> {
  const ca = await createCA('package-server-ca');
  const tls = await issueServingCert(ca, 'package-server', ['package-server.olm.svc']);
  const server = addPackageServer(manager, { host: '127.0.0.1', port: 0, tls, requestHeader: await readRequestHeaderAuth(client) });
  return async () => {
    const port = await eventually('the package server listening', () => server.port || undefined);
    await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'List', items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olm' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'package-server', namespace: 'olm' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 5443 }] } },
        { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'package-server', namespace: 'olm' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] },
        { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.packages.operators.coreos.com' }, spec: { group: 'packages.operators.coreos.com', version: 'v1', groupPriorityMinimum: 2000, versionPriority: 15, service: { namespace: 'olm', name: 'package-server' }, caBundle: Buffer.from(ca.certPem).toString('base64') } },
      ],
    }));
  };
}

const BY_NAME: Record<string, ResourceRef<unknown>> = {
  csv: resources.clusterServiceVersions, sub: resources.subscriptions, ip: resources.installPlans, catsrc: resources.catalogSources, og: resources.operatorGroups,
  deployment: resources.deployments, serviceaccount: resources.serviceAccounts, role: resources.roles, rolebinding: resources.roleBindings,
  clusterrole: resources.clusterRoles, clusterrolebinding: resources.clusterRoleBindings, crd: resources.customResourceDefinitions, configmap: resources.configMaps,
};

/**
 * The object `kubectl get KIND NAME [-n NS]` would show, read through the API (polling loops read
 * often; kubectl itself is exercised where users type it), or undefined when it is not there.
 */
export async function getJson(api: TestApiServer, args: string[]): Promise<any> {
  const [kind, name, flag, namespace] = args;
  const resource = BY_NAME[kind];
  if (resource && (flag === undefined || flag === '-n')) {
    const client = clients.get(api) ?? new KubeClient(loadKubeConfig(api.kubeconfigPath));
    clients.set(api, client);
    return client.read(resource as ResourceRef, name, namespace);
  }
  const r = await api.kubectl(['get', ...args, '-o', 'json']);
  return r.code === 0 ? JSON.parse(r.stdout) : undefined;
}
const clients = new WeakMap<TestApiServer, KubeClient>();
