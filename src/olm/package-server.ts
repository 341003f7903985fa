// OLM's package server: the read-only PackageManifests (packages.operators.coreos.com/v1) served
// behind the APIService v1.packages.operators.coreos.com, one per package of each READY catalog —
// its channels with their head CSV (currentCSV, and what that CSV says of itself), the default
// channel, labelled `catalog` and `catalog-namespace` (and the provider) as OLM labels them, so that
// `kubectl get packagemanifests -n NS` lists OperatorHub. A namespace holds the packages of its own
// catalogs and of the global catalog namespace's (openshift-marketplace), as OLM's does; the
// cluster-wide list holds every catalog's.
//
// Served: discovery (/apis/<group>, /apis/<group>/v1), get and list (labelSelector,
// fieldSelector metadata.name), as JSON or, when asked (kubectl), as a Table with the columns
// NAME, CATALOG, AGE. Who asks is authenticated as metrics-server does (the aggregator's
// front-proxy certificate, else a bearer token) and authorised with a SubjectAccessReview.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as api from '../api/index.js';
import { parseTarget } from '../common/http-limits.js';
import { boundPort, closeServer, failureStatus, listenOn, sendJson, type JsonAnswer } from '../common/http-server.js';
import { matchesLabels, parseLabelSelector, type LabelSelector } from '../common/label-selectors.js';
import { type Logger, logger } from '../common/log.js';
import { age } from '../common/time.js';
import { DelegatedAuth, type Informer, type KubeClient, type Manager, type RequestHeaderAuth, type ResourceAttributes, aggregatedApiRefusal, aggregatedServerOptions, resources } from '../kube/index.js';
import { catalogContext } from './catalogs.js';
import { CLUSTER_OPERATORS, olmClusterOperatorController } from './cluster-operator.js';
import type { OlmSettings } from './context.js';
import { type Catalog, bundleCsv } from './fbc.js';

export const PACKAGES_GROUP = 'packages.operators.coreos.com';
export const PACKAGES_VERSION = 'v1';
const GROUP_VERSION = `${PACKAGES_GROUP}/${PACKAGES_VERSION}`;
/** Where OpenShift's default catalogs live: their packages are offered in every namespace. */
export const GLOBAL_CATALOG_NAMESPACE = 'openshift-marketplace';

export const RESOURCE_LIST = {
  kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GROUP_VERSION,
  resources: [{ name: 'packagemanifests', singularName: 'packagemanifest', namespaced: true, kind: 'PackageManifest', verbs: ['get', 'list'], categories: ['olm'] }],
};

/** A READY catalog and its CatalogSource. */
export interface ServedCatalog {
  source: api.CatalogSource;
  catalog: Catalog;
}

/** The PackageManifests of one catalog. Pure. */
export function packageManifests({ source, catalog }: ServedCatalog): api.PackageManifest[] {
  const namespace = source.metadata.namespace ?? '';
  return [...catalog.packages.values()].sort((a, b) => a.name.localeCompare(b.name)).map((pkg) => {
    const headCsv = (channel: string) => {
      const c = pkg.channels.get(channel)!;
      const bundle = pkg.bundles.get(c.head)!;
      return { bundle, csv: bundleCsv(bundle) };
    };
    const provider = headCsv(pkg.defaultChannel).csv?.spec.provider;
    const channels: api.PackageChannel[] = [...pkg.channels.values()].sort((a, b) => a.name.localeCompare(b.name)).map((c) => {
      const { bundle, csv } = headCsv(c.name);
      return {
        name: c.name,
        currentCSV: csv?.metadata.name ?? bundle.name,
        currentCSVDesc: {
          displayName: csv?.spec.displayName,
          description: csv?.spec.description,
          version: bundle.version,
          provider: csv?.spec.provider,
          installModes: csv?.spec.installModes,
          customresourcedefinitions: csv?.spec.customresourcedefinitions,
          keywords: csv?.spec.keywords,
          annotations: csv?.metadata.annotations as Record<string, string> | undefined,
        },
        entries: c.entries.map((e) => ({ name: e.name, version: pkg.bundles.get(e.name)?.version })),
      };
    });
    return {
      apiVersion: GROUP_VERSION,
      kind: 'PackageManifest',
      metadata: {
        name: pkg.name,
        namespace,
        creationTimestamp: source.metadata.creationTimestamp,
        labels: {
          catalog: source.metadata.name,
          'catalog-namespace': namespace,
          ...(provider?.name ? { provider: provider.name.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 63) } : {}),
          'operatorframework.io/arch.amd64': 'supported',
          'operatorframework.io/os.linux': 'supported',
        },
      },
      spec: {},
      status: {
        catalogSource: source.metadata.name,
        catalogSourceDisplayName: source.spec.displayName,
        catalogSourcePublisher: source.spec.publisher,
        catalogSourceNamespace: namespace,
        packageName: pkg.name,
        defaultChannel: pkg.defaultChannel,
        provider,
        channels,
      },
    };
  });
}

/** The request a path below /apis/<group>/v1 stands for. */
export function requestOf(path: string): { namespace?: string; name?: string } | undefined {
  const parts = path.split('/').filter(Boolean);
  const namespace = parts[0] === 'namespaces' ? parts[1] : undefined;
  const rest = namespace === undefined ? parts : parts.slice(2);
  if (rest[0] !== 'packagemanifests' || rest.length > 2 || (namespace === undefined && rest.length > 1)) return undefined;
  return { namespace, name: rest[1] };
}

/** The answer to a GET below /apis/<group>/v1 (JSON or a Table). Pure over the catalogs and the clock. */
export function answer(catalogs: readonly ServedCatalog[], path: string, query: URLSearchParams, asTable: boolean, nowMs: number): JsonAnswer {
  if (path.split('/').filter(Boolean).length === 0) return { code: 200, body: RESOURCE_LIST };
  const request = requestOf(path);
  if (!request) return failureStatus(404, 'NotFound', 'the server could not find the requested resource');
  let selector: LabelSelector = [];
  try {
    selector = parseLabelSelector(query.get('labelSelector') ?? '');
  } catch (e) {
    return failureStatus(400, 'BadRequest', (e as Error).message);
  }
  const fieldName = /^metadata\.name=(.+)$/.exec(query.get('fieldSelector') ?? '')?.[1];
  if (query.get('fieldSelector') && !fieldName) return failureStatus(400, 'BadRequest', `field selector "${query.get('fieldSelector')}": only metadata.name=NAME is supported`);
  const { namespace, name } = request;
  const visible = catalogs.filter((c) => namespace === undefined || c.source.metadata.namespace === namespace || c.source.metadata.namespace === GLOBAL_CATALOG_NAMESPACE);
  // Seen from a namespace, a global catalog's packages are in that namespace.
  const manifests = visible.flatMap(packageManifests).map((m) => (namespace && m.metadata.namespace !== namespace ? { ...m, metadata: { ...m.metadata, namespace } } : m));
  const wanted = manifests.filter((m) => (name === undefined || m.metadata.name === name) && (fieldName === undefined || m.metadata.name === fieldName) && matchesLabels(selector, m.metadata.labels));
  if (name !== undefined && wanted.length === 0) return failureStatus(404, 'NotFound', `packagemanifests.${PACKAGES_GROUP} "${name}" not found`);
  if (asTable) {
    return {
      code: 200,
      body: {
        kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: {},
        columnDefinitions: [
          { name: 'Name', type: 'string', format: 'name', description: 'The package\'s name', priority: 0 },
          { name: 'Catalog', type: 'string', format: '', description: 'The display name of the catalog it comes from', priority: 0 },
          { name: 'Age', type: 'string', format: '', description: 'Age of the catalog source', priority: 0 },
        ],
        rows: wanted.map((m) => ({ cells: [m.metadata.name, m.status.catalogSourceDisplayName ?? m.status.catalogSource, age(m.metadata.creationTimestamp, nowMs)], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: m.metadata } })),
      },
    };
  }
  if (name !== undefined) return { code: 200, body: wanted[0] };
  return { code: 200, body: { kind: 'PackageManifestList', apiVersion: GROUP_VERSION, metadata: {}, items: wanted } };
}

export interface PackageServerOptions {
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string };
  requestHeader?: RequestHeaderAuth;
  log: Logger;
  now?: () => number;
}

/** The HTTPS server; a manager runnable on every replica. */
export class PackageServer {
  readonly name = 'package-server';
  readonly needsLeaderElection = false;
  private server?: Server;
  private readonly auth: DelegatedAuth;

  constructor(
    private readonly client: KubeClient,
    private readonly catalogs: () => ServedCatalog[],
    private readonly informers: Informer<api.KubeObject>[],
    private readonly o: PackageServerOptions,
  ) {
    this.auth = new DelegatedAuth(client);
  }

  async start(signal?: AbortSignal): Promise<void> {
    this.server = createServer(aggregatedServerOptions(this.o.tls, this.o.requestHeader), (req, res) => {
      this.handle(req, res).catch((e) => sendJson(res, failureStatus(500, 'InternalError', (e as Error).message)));
    });
    await listenOn(this.server, this.o.port, this.o.host);
    this.o.log.info({ port: this.port }, `serving ${GROUP_VERSION}`);
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  get port(): number {
    return boundPort(this.server) ?? 0;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await closeServer(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = parseTarget(req, 'https://package-server');
    if (!url) return sendJson(res, failureStatus(400, 'BadRequest', 'the request target is not a URL'));
    if (/^\/(healthz|livez|readyz)$/.test(url.pathname)) {
      const synced = this.informers.every((i) => i.hasSynced());
      return void res.writeHead(synced ? 200 : 503, { 'content-type': 'text/plain' }).end(synced ? 'ok' : 'catalogs not read yet');
    }
    if (url.pathname === `/apis/${PACKAGES_GROUP}`) {
      const version = { groupVersion: GROUP_VERSION, version: PACKAGES_VERSION };
      return sendJson(res, { code: 200, body: { kind: 'APIGroup', apiVersion: 'v1', name: PACKAGES_GROUP, versions: [version], preferredVersion: version } });
    }
    const prefix = `/apis/${GROUP_VERSION}`;
    if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return sendJson(res, failureStatus(404, 'NotFound', 'the server could not find the requested resource'));
    if (req.method !== 'GET') return sendJson(res, failureStatus(405, 'MethodNotAllowed', 'PackageManifests are read-only: they are what the catalogs hold'));
    const path = url.pathname.slice(prefix.length);
    const request = requestOf(path);
    const attributes: ResourceAttributes | undefined = request && { verb: request.name ? 'get' : 'list', group: PACKAGES_GROUP, version: PACKAGES_VERSION, resource: 'packagemanifests', ...(request.namespace ? { namespace: request.namespace } : {}), ...(request.name ? { name: request.name } : {}) };
    const refusal = await aggregatedApiRefusal(req, { auth: this.auth, requestHeader: this.o.requestHeader }, attributes, url.pathname);
    if (refusal) return sendJson(res, refusal);
    const asTable = /as=Table/.test(req.headers.accept ?? '');
    sendJson(res, answer(this.catalogs(), path, url.searchParams, asTable, (this.o.now ?? Date.now)()));
  }
}

/** The package server, as the `package-server` process runs it, over the manager's CatalogSource
 *  and ConfigMap informers. */
export function addPackageServer(manager: Manager, options: Omit<PackageServerOptions, 'log'> & { log?: Logger }, settings: OlmSettings = {}): PackageServer {
  const ctx = catalogContext(manager, settings.clock);
  const sources = ctx.informer(resources.catalogSources);
  const configMaps = ctx.informer(resources.configMaps);
  const catalogs = () => sources.list().flatMap((source) => {
    const state = ctx.catalogs.state(source, (cm) => configMaps.get(cm, source.metadata.namespace));
    return state.ready ? [{ source, catalog: state.catalog }] : [];
  });
  const server = new PackageServer(ctx.client, catalogs, [sources, configMaps] as Informer<api.KubeObject>[], { ...options, log: options.log ?? logger('package-server') });
  manager.add(server);
  if (settings.releaseVersion !== undefined) manager.add(olmClusterOperatorController(ctx, { name: CLUSTER_OPERATORS.packageServer, version: settings.releaseVersion, crds: ['catalogsources'], ready: () => (server.port ? undefined : 'the package server is not listening yet') }));
  return server;
}
