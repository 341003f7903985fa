// OLM's components as OLM runs them, each on the component manager until SIGTERM:
//   `bosun olm-operator`      OperatorGroups and ClusterServiceVersions (Lease
//                             openshift-operator-lifecycle-manager/olm-operator)
//   `bosun catalog-operator`  CatalogSources, Subscriptions and InstallPlans (Lease
//                             openshift-operator-lifecycle-manager/catalog-operator)
//   `bosun package-server`    PackageManifests behind the APIService v1.packages.operators.coreos.com
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';
import { logger } from '../common/log.js';
import { podPath } from '../common/pod-path.js';
import { readRequestHeaderAuth } from '../kube/index.js';
import { registerComponent, releaseVersionOption } from '../kube/manager-flags.js';
import { servingCertificate } from '../metrics-server/run.js';

const NAMESPACE = 'openshift-operator-lifecycle-manager';

/** Registers the three commands once (main.ts lists this module under each of their names). */
export function register(program: Command): void {
  if (program.commands.some((c) => c.name() === 'olm-operator')) return;
  registerComponent<{ releaseVersion?: string }>(program, {
    name: 'olm-operator',
    lease: { namespace: NAMESPACE, name: 'olm-operator' },
    description: 'run OLM\'s operator: OperatorGroups\' target namespaces and ClusterServiceVersions (requirements, install modes, the deployment install strategy, replacement)',
    flags: (command) => command.addOption(releaseVersionOption('operator-lifecycle-manager')),
    help: `
Leader election: the Lease ${NAMESPACE}/olm-operator.

A ClusterServiceVersion goes Pending (its CRDs missing) → InstallReady → Installing (its
Deployments, ServiceAccounts, Roles and ClusterRoles made) → Succeeded once its Deployments are
Available; Failed with TooManyOperatorGroups, UnsupportedOperatorGroup or InstallCheckFailed;
the CSV a newer one replaces goes Replacing, then Deleting, then away. The Subscription's
spec.config (env, envFrom, resources, nodeSelector, tolerations, volumes, volumeMounts, affinity,
annotations) goes into the CSV's Deployments; a CSV serving other namespaces is copied into each
(label olm.copiedFrom, reason Copied); each OperatorGroup's olm.providedAPIs names what its
operators own. With --release-version (or $RELEASE_VERSION) it reports on ClusterOperator
operator-lifecycle-manager.

Example:
  $ bosun olm-operator --kubeconfig .bosun/kubeconfig &
  $ kubectl get csv -n demo
  NAME          DISPLAY     VERSION   REPLACES      PHASE
  demo.v1.1.0   Demo demo   1.1.0     demo.v1.0.0   Succeeded`,
    async setup(manager, o) {
      const { addOlmOperator } = await import('../olm/olm-operator.js');
      addOlmOperator(manager, { releaseVersion: o.releaseVersion });
    },
  });

  registerComponent<{ releaseVersion?: string }>(program, {
    name: 'catalog-operator',
    lease: { namespace: NAMESPACE, name: 'catalog-operator' },
    description: 'run OLM\'s catalog operator: CatalogSources (File-Based Catalogs in ConfigMaps), Subscriptions resolved to InstallPlans, InstallPlans applied once approved',
    flags: (command) => command.addOption(releaseVersionOption('operator-lifecycle-manager-catalog')),
    help: `
Leader election: the Lease ${NAMESPACE}/catalog-operator.

A CatalogSource (sourceType configmap) is READY when its ConfigMap's files are a valid File-Based
Catalog, else TRANSIENT_FAILURE with a message naming the bad blob. A Subscription is resolved to
its channel head (or startingCSV) and then along the channel, one InstallPlan per step; Manual
plans wait in RequiresApproval until spec.approved is true.

Example:
  $ bosun catalog-operator --kubeconfig .bosun/kubeconfig &
  $ kubectl get sub,ip -n demo
  NAME                                     PACKAGE   SOURCE            CHANNEL
  subscription.operators.coreos.com/demo   demo      bosun-operators   stable

  NAME                                            CSV           APPROVAL   APPROVED
  installplan.operators.coreos.com/install-8xk2p  demo.v1.1.0   Manual     false`,
    async setup(manager, o) {
      const { addCatalogOperator } = await import('../olm/catalog-operator.js');
      addCatalogOperator(manager, { releaseVersion: o.releaseVersion });
    },
  });

  registerComponent<{ secureListen: string; releaseVersion?: string }>(program, {
    name: 'package-server',
    lease: { namespace: NAMESPACE, name: 'package-server' },
    defaults: { leaderElect: false },
    description: 'serve OLM\'s read-only PackageManifests (packages.operators.coreos.com/v1) of every READY catalog, behind an APIService',
    flags: (command) => command
      .option('--secure-listen <host:port>', 'where the HTTPS API listens (behind the APIService v1.packages.operators.coreos.com)', '0.0.0.0:5443')
      .addOption(releaseVersionOption('operator-lifecycle-manager-packageserver')),
    help: `
The API serves the certificate of the shared --tls-cert-file and --tls-private-key-file (without
them, a self-signed one made at start). Requests come from the API server's aggregator
(front-proxy certificate and X-Remote-User, checked against
kube-system/extension-apiserver-authentication) or with a bearer token; both are authorised with
SubjectAccessReviews. A namespace lists its own catalogs' packages and openshift-marketplace's.

Example:
  $ bosun package-server --kubeconfig .bosun/kubeconfig --secure-listen 127.0.0.1:5443 &
  $ kubectl get packagemanifests -n demo
  NAME   CATALOG           AGE
  demo   bosun Operators   5m`,
    async setup(manager, o) {
      const listen = parseHostPort(o.secureListen, '--secure-listen');
      const { addPackageServer } = await import('../olm/package-server.js');
      const log = logger('package-server');
      const tls = await servingCertificate({ cert: podPath(o.tlsCertFile), key: podPath(o.tlsPrivateKeyFile) }, ['localhost', '127.0.0.1', listen.host, `package-server-service.${NAMESPACE}.svc`], 'package-server');
      const requestHeader = await readRequestHeaderAuth(manager.client);
      if (!requestHeader) log.warn('no request-header CA in kube-system/extension-apiserver-authentication: only bearer tokens are accepted');
      addPackageServer(manager, { ...listen, tls, requestHeader, log }, { releaseVersion: o.releaseVersion });
    },
  });
}
