// The embedded Kubernetes-compatible API server: wires HTTPS (fastify), the storage (SQLite or etcd), the
// type registry and object semantics (registry/) to one filter chain (filters/) that every
// request passes — metrics, recovery, shutdown, authentication, request information, in-flight
// metrics, audit, authorization — ending in the handlers by concern (handlers/). It only wires:
// what a request does is decided in those files.
import Fastify, { type FastifyInstance } from 'fastify';
import { METHODS } from 'node:http';
import { ensurePrivateDir } from '../common/private-files.js';
import { join, resolve } from 'node:path';
import { logger } from '../common/log.js';
import { bounded } from '../common/bounded.js';
import { REQUEST_LIMITS, REQUEST_TIMEOUT_MS } from '../common/http-limits.js';
import { openSqliteStorage } from './storage/sqlite.js';
import { errors } from './errors.js';
import { Registry } from './registry/registry.js';
import { Resources } from './registry/resources.js';
import { crdHooks, loadCrds } from './crds/crds.js';
import { namespaceHooks, cleanUpTerminatingNamespaces } from './controllers/namespace-lifecycle.js';
import { OpenApi } from './openapi/documents.js';
import { objectSizeHooks } from './admission/object-size.js';
import { WebhookAdmission } from './admission/webhooks.js';
import { QuotaAdmission } from './admission/resource-quota.js';
import { LimitRanger } from './admission/limit-ranger.js';
import { PodSecurityAdmission } from './admission/pod-security.js';
import { PriorityAdmission } from './admission/priority.js';
import { ServiceAccountAdmission } from './admission/service-account.js';
import { DefaultStorageClass } from './admission/default-storage-class.js';
import { StorageObjectInUseProtection } from './admission/storage-protection.js';
import { PersistentVolumeClaimResize } from './admission/claim-resize.js';
import { SYSTEM_PRIORITY_CLASSES } from './kinds/priorityclasses.js';
import { storageKey } from './registry/resource-type.js';
import { ensureKubernetesService } from './controllers/kubernetes-service.js';
import { publishExtensionAuthentication } from './aggregator/extension-authentication.js';
import { enableApiServiceAvailability } from './aggregator/availability.js';
import { nthAddress } from '../common/ipv4.js';
import { checkServiceCidr, DEFAULT_SERVICE_CIDR } from './kinds/service-allocation.js';
import { loadServingMaterial, writeKubeconfig } from './serving.js';
import { answerUnparsable, sendError, statusOf } from './http/respond.js';
import { missingHost, refuseExpectation } from './http/refusals.js';
import { trackConnections } from './http/drain.js';
import { routeUpgrades } from './http/upgrade.js';
import { chain, requestContext } from './filters/chain.js';
import { requestMetrics } from './filters/metrics.js';
import { recovery } from './filters/recovery.js';
import { shutdown } from './filters/shutdown.js';
import { authenticate, authentication } from './filters/authentication.js';
import { withRequestInfo } from './filters/request-info.js';
import { audit } from './filters/audit.js';
import { authorization } from './filters/authorization.js';
import { impersonation } from './filters/impersonation.js';
import { KUBERNETES_VERSION } from './handlers/health.js';
import { router } from './handlers/router.js';
import type { ServerState } from './handlers/state.js';
import type { ApiServer, ApiServerOptions, Authenticator, Authorizer, CompletedRequest, PostHandler } from './types.js';

export type { ApiServer, ApiServerOptions, Authenticator, Authorizer, CompletedRequest, PostHandler, PostRequest, RequestAttributes, User } from './types.js';
export { KUBERNETES_VERSION };

/** How long stop() waits for the HTTP server to close before closing the storage anyway. */
const CLOSE_BOUND_MS = 10_000;

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
// Every method Node's HTTP parser accepts reaches the chain, so that each gets a Status (405).
const ROUTED_METHODS = METHODS.filter((m) => m !== 'CONNECT');

export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? '127.0.0.1';
  const log = logger('apiserver');
  if (options.logLevel) log.level = options.logLevel;
  const serviceClusterIPRange = options.serviceClusterIPRange ?? DEFAULT_SERVICE_CIDR;
  checkServiceCidr(serviceClusterIPRange);
  ensurePrivateDir(dataDir);
  // Valid for the `kubernetes` Service's cluster IP too, as kube-apiserver's own serving certificate is.
  const serving = await loadServingMaterial(dataDir, host, [...(options.servingNames ?? []), nthAddress(serviceClusterIPRange, 1)]);

  // SQLite in the data directory, or etcd shared with other API servers (storage/etcd.ts).
  // etcd's client (gRPC, protobufs: some 25 MiB) is loaded only when it is the storage.
  const etcd = options.etcd ? await (await import('./storage/etcd.js')).openEtcdStorage(options.etcd) : undefined;
  const storage = etcd ?? openSqliteStorage(join(dataDir, 'state.db'));
  const registry = new Registry();
  loadCrds(registry, storage);
  const resources = new Resources(storage, registry, { serviceClusterIPRange });
  resources.addHooks(crdHooks(registry, storage));
  resources.addHooks(namespaceHooks(resources, registry));
  resources.addHooks(objectSizeHooks());
  resources.webhooks = new WebhookAdmission(storage);
  // kube-apiserver's order: LimitRanger, ServiceAccount, Priority, DefaultStorageClass and
  // StorageObjectInUseProtection mutate before the webhooks, PersistentVolumeClaimResize and
  // PodSecurity validate; ResourceQuota charges last.
  resources.admission = [new LimitRanger(storage), new ServiceAccountAdmission(storage), new PriorityAdmission(storage), new DefaultStorageClass(storage), new StorageObjectInUseProtection(), new PersistentVolumeClaimResize(storage), new PodSecurityAdmission(storage), new QuotaAdmission(storage)];
  // What kube-apiserver makes at start (its post-start hooks): the default namespaces and the
  // system PriorityClasses. Another API server on the same etcd may make one at the same moment.
  const ensure = async (group: string, resource: string, body: Record<string, unknown> & { metadata: { name: string } }) => {
    const type = registry.lookup(group, 'v1', resource)!;
    if (storage.get(storageKey(type, undefined, body.metadata.name))) return;
    await resources.create(type, undefined, body).catch((e: Error) => {
      if ((e as { reason?: string }).reason !== 'AlreadyExists') throw e;
    });
  };
  for (const name of DEFAULT_NAMESPACES) await ensure('', 'namespaces', { metadata: { name } });
  for (const { name, value, description } of SYSTEM_PRIORITY_CLASSES) await ensure('scheduling.k8s.io', 'priorityclasses', { metadata: { name }, value, description });
  cleanUpTerminatingNamespaces(resources, registry);

  const authenticators: Authenticator[] = [(token) => (token === serving.adminToken ? { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] } : undefined)];
  let authorizer: Authorizer = options.accessControlPending
    ? ({ user }) => (user.groups.includes('system:masters') ? undefined : `the API server is starting and has not loaded its access control yet: only system:masters is authorised (user "${user.name}")`)
    : () => undefined;
  let stopped = false;
  let draining: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const completedListeners: ((request: CompletedRequest) => void)[] = [];
  const metrics = requestMetrics(storage, log);
  const measured = options.requestMetrics !== false;
  if (etcd && measured) etcd.requestObserver = metrics.etcdRequest;
  let port = options.port ?? 6443;
  const state: ServerState = {
    storage, registry, resources, postHandlers: [] as PostHandler[], watches: new Set(), watchEvents: measured ? metrics.watchEvents : () => () => undefined,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000, serverAddress: () => `${host}:${port}`, kubeletClientCert: serving.kubeletClientCert,
    authorize: (attributes) => authorizer(attributes),
    gitVersion: options.kubernetesVersion,
    proxyClientCert: serving.proxyClientCert,
    aggregatedDiscovery: new Map(),
  };
  metrics.countObjects(registry);
  const serve = chain(
    [
      ...(measured ? [metrics.filter] : []), recovery(log), shutdown(() => stopped), authentication(authenticators), withRequestInfo(),
      ...(measured ? [metrics.inflight] : []), audit(completedListeners),
      impersonation(() => authorizer), authorization(() => authorizer),
    ],
    router(state, new OpenApi(registry, options.kubernetesVersion ?? KUBERNETES_VERSION.gitVersion), metrics.registry),
  );

  const app: FastifyInstance = Fastify({
    // Client certificates are asked for, not required: bearer tokens keep working beside them.
    https: { ...REQUEST_LIMITS, requireHostHeader: false, key: serving.keyPem, cert: serving.certPem, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false, ca: serving.caPem },
    // A request body not received in time is a slow client's (common/http-limits.ts); fastify's default is no bound.
    requestTimeout: REQUEST_TIMEOUT_MS,
    logger: false,
    // Requests during shutdown get a Status from the chain (filters/shutdown.ts).
    return503OnClosing: false,
    forceCloseConnections: true,
    // The router's own refusals (a URL that does not decode, …) are Statuses too.
    frameworkErrors: (error, _request, reply) => sendError(reply, statusOf(error)),
    // A request Node cannot parse still gets a Status (http/respond.ts).
    clientErrorHandler: answerUnparsable,
  });
  for (const method of ROUTED_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  // Bodies are read by the handlers, after authentication and authorization (http/body.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.setErrorHandler((error, _request, reply) => sendError(reply, statusOf(error as Error)));
  // What Node would refuse with a bare answer gets a Status (http/refusals.ts).
  app.addHook('onRequest', async (request, reply) => {
    const refusal = missingHost(request.raw);
    if (refusal) return sendError(reply, refusal);
  });
  app.server.on('checkExpectation', refuseExpectation);
  // `kubectl exec`'s WebSocket upgrade goes through the chain like any request (http/upgrade.ts).
  const closeUpgrades = routeUpgrades(app.server);
  // A stop with a grace period lets the open connections go first (http/drain.ts).
  const connections = options.shutdownGraceMs !== undefined ? trackConnections(app.server) : undefined;
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.pathNotFound(request.url.split('?')[0])));
  app.route({
    method: ROUTED_METHODS,
    url: '*',
    handler: async (request, reply) => {
      await serve(requestContext(request, reply));
      return reply;
    },
  });

  const kubeconfigPath = join(dataDir, 'kubeconfig');
  // The kubeconfig is written before the server accepts connections; with port 0 the real port
  // is only known after binding, so it is written between bind and ready below.
  if (port !== 0) writeKubeconfig(kubeconfigPath, `https://${host}:${port}`, serving.caPem, serving.adminToken);
  await app.listen({ host, port });
  const address = app.server.address();
  if (address && typeof address === 'object') port = address.port;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if ((options.port ?? 6443) === 0) writeKubeconfig(kubeconfigPath, url, serving.caPem, serving.adminToken);

  const compactKeep = options.compactKeep ?? 10_000;
  const compactTimer = setInterval(() => {
    try {
      storage.compact(compactKeep);
    } catch (e) {
      log.warn({ err: e }, 'compaction failed');
    }
  }, options.compactIntervalMs ?? 60_000);
  compactTimer.unref();
  await ensureKubernetesService(resources, registry, serviceClusterIPRange, options.advertise ?? { address: host, port }, log)
    .then(() => publishExtensionAuthentication(resources, registry, serving.caPem, serving.frontProxyCaPem)).catch(async (e) => {
    clearInterval(compactTimer);
    await app.close();
    await storage.close();
    throw e;
  });

  const availability = enableApiServiceAvailability(storage, registry, resources, serving.proxyClientCert, log, state.aggregatedDiscovery, options.apiServiceCheckIntervalMs);
  log.info({ url, dataDir, storage: options.etcd ? `etcd ${options.etcd.endpoints.join(',')}` : 'sqlite', revision: storage.currentRevision() }, 'API server listening');

  /** The first half of a stop (ApiServer.drain). */
  const drain = (): Promise<void> => {
    draining ??= (async () => {
      // From here every request is answered 503 with Retry-After and `Connection: close`
      // (filters/shutdown.ts); watches end, and their clients watch again elsewhere.
      stopped = true;
      for (const stopWatch of [...state.watches]) stopWatch();
      if (!connections) return;
      const open = connections.open;
      const started = Date.now();
      await connections.drain(options.shutdownGraceMs ?? 0);
      log.info({ url, open, left: connections.open, ms: Date.now() - started }, 'API server drained its connections');
    })();
    return draining;
  };

  return {
    url, port, host, kubeconfigPath, caPem: serving.caPem, token: serving.adminToken, storage, registry, resources,
    addAuthenticator: (a) => authenticators.push(a),
    authenticateToken: (token) => authenticate(authenticators, token),
    addPostHandler: (h) => state.postHandlers.push(h),
    onCompleted: (l) => completedListeners.push(l),
    setAuthorizer: (a) => {
      authorizer = a;
    },
    drain,
    async stop() {
      if (closing) return closing;
      closing = (async () => {
        await drain();
        clearInterval(compactTimer);
        availability.stop();
        for (const stopWatch of [...state.watches]) stopWatch();
        closeUpgrades();
        // Every connection is ended (forceCloseConnections); one still in its TLS handshake, which
        // Node's HTTP server does not know yet, could hold the close for the handshake timeout: the
        // storage closes after a bound in any case.
        await bounded(app.close(), CLOSE_BOUND_MS, `the API server on ${url} closing its connections`).catch((e: Error) => log.warn({ err: e.message }, 'API server: closing the storage anyway'));
        await storage.close();
        log.info({ url }, 'API server stopped');
      })();
      return closing;
    },
  };
}
