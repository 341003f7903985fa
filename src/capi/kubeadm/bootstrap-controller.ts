// The kubeadm bootstrap provider's controller (Cluster API's KubeadmConfigReconciler): for a
// KubeadmConfig owned by a Machine, the bootstrap data — Ignition (bootstrap-ignition.ts) in a
// Secret named as the config (type cluster.x-k8s.io/secret, the cluster-name label, owned by the
// config; `value` the Ignition JSON, `format` "ignition") — then status.dataSecretName and
// status.initialization.dataSecretCreated. The Machine controller copies the name to the Machine's
// spec.bootstrap.dataSecretName.
//
// The steps, each wait named in the DataSecretAvailable condition (reason and message):
//   no Machine owns the config yet            → WaitingForOwner
//   the spec is invalid (validation.ts), format cloud-config, an unknown Kubernetes version
//                                             → InvalidSpec (no retry until the object changes)
//   the Cluster's infrastructure or control-plane endpoint is not there → WaitingForClusterInfrastructure
//   Cluster not ControlPlaneInitialized:
//     a worker                                → WaitingForControlPlaneInitialization (requeue 30 s)
//     a control-plane machine takes the ConfigMap lock `<cluster>-lock` (owned by the Cluster,
//     `lock-information: {"machineName": …}`); held by another Machine that exists
//                                             → WaitingForInitLock (requeue 30 s)
//     holding it: the cluster's certificates (looked up, or generated into `<cluster>-ca`, `-etcd`,
//     `-proxy`, `-sa` with the Cluster as a non-controller owner, so they go with it), *init* data
//   Cluster ControlPlaneInitialized (the lock is released):
//     the certificates must exist             → WaitingForCertificates
//     a bootstrap token, created in the workload cluster through `<cluster>-kubeconfig`
//     (kept in spec.joinConfiguration.discovery.bootstrapToken.token, as Cluster API keeps it);
//     no kubeconfig or no answer              → WaitingForWorkloadCluster (requeue 10 s)
//     then *join* data (control plane or worker, by the Machine's control-plane label).
// Once the data Secret exists, the config is done: later reconciles change nothing.
import { randomInt } from 'node:crypto';
import type * as api from '../../api/index.js';
import { issueClientCert, type KeyPair } from '../../common/pki.js';
import { rfc3339 } from '../../common/time.js';
import { Controller, KubeClient, KubeConfig, type SyncResult, controllerReference, isAlreadyExists, isNotFound, resources } from '../../kube/index.js';
import { API_VERSION, type CapiCondition, CLUSTERS, LABEL, MACHINES, type NewCapiCondition, isDeleting, setCapiCondition } from '../api.js';
import type { CapiContext } from '../context.js';
import { BOOTSTRAP_API_VERSION, CLUSTER_SECRET_TYPE, FORMAT, KUBEADM_CONFIGS, KUBEADM_CONFIG_CONDITION, KUBEADM_CONFIG_REASON } from './api.js';
import {
  ADMIN_KUBECONFIG_PATH, BOOTSTRAP_KUBELET_KUBECONFIG_PATH, type BootstrapRole, type ClusterNetwork, KUBELET_KUBECONFIG_PATH, bootstrapIgnition, kubeconfigPaths,
} from './bootstrap-ignition.js';
import { type ClusterCertificates, clusterSecretName, endpointUrl, kubeconfigYaml, lookupCertificates, lookupOrGenerateCertificates } from './certificates.js';
import { clusterNetworkFor, localNetworkProblems } from './cluster-template.js';
import { CONTROLLER_MANAGER_KUBECONFIG, SCHEDULER_KUBECONFIG } from './static-pods.js';
import { bootstrapFormat, defaultKubeadmConfig, validateKubeadmConfig } from './validation.js';
import { findKubernetesVersion, unknownVersionMessage } from './versions.js';

/** How often a wait on something not watched (the lock's holder, the workload cluster) is looked at again. */
const WAIT_MS = 30_000;
const WORKLOAD_RETRY_MS = 10_000;
/** A join token's life (Cluster API's DefaultTokenTTL). */
const TOKEN_TTL_MS = 15 * 60_000;
/** The group kubeadm gives its join tokens (and binds to node bootstrapping). */
const TOKEN_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
/** How long a request to the workload cluster may take before the wait says it does not answer. */
const WORKLOAD_TIMEOUT_MS = 10_000;

/** The ConfigMap key Cluster API's init lock keeps its holder in. */
export const LOCK_KEY = 'lock-information';
export const initLockName = (cluster: string) => `${cluster}-lock`;

/**
 * The workload cluster's networks: Cluster.spec.clusterNetwork's first blocks; a range it leaves out
 * is the loopback range `bosun cluster generate` would pick for this cluster (kubeadm's defaults,
 * 10.96.0.0/12 and no pod range, are not addresses the local machines can serve).
 */
export function clusterNetwork(cluster: api.Cluster): ClusterNetwork & { podCidr: string } {
  const n = cluster.spec?.clusterNetwork;
  const fallback = clusterNetworkFor(cluster.metadata.namespace ?? 'default', cluster.metadata.name);
  return {
    serviceCidr: n?.services?.cidrBlocks?.[0] ?? fallback.serviceCidr,
    podCidr: n?.pods?.cidrBlocks?.[0] ?? fallback.podCidr,
    serviceDomain: n?.serviceDomain ?? 'cluster.local',
  };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const random = (n: number) => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

/** The Secret `kubeadm token create` stores for `token` (`<6>.<16>` of [a-z0-9]), in kube-system. */
export function bootstrapTokenSecret(token: string, expiration: Date): api.Secret {
  const [id, secret] = token.split('.');
  const data: Record<string, string> = {
    'token-id': id,
    'token-secret': secret,
    expiration: rfc3339(expiration),
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true',
    'auth-extra-groups': TOKEN_GROUP,
    description: 'Bootstrap token generated by Cluster API\'s kubeadm bootstrap provider (bosun)',
  };
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.kubernetes.io/token',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/** A client of the workload cluster from its admin kubeconfig. */
function workloadClient(kubeconfig: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return new KubeClient(kc, { component: 'kubeadm-bootstrap-controller' });
}

type Wait = { reason: string; message: string; requeueAfterMs?: number };

export function kubeadmBootstrapController(ctx: CapiContext): Controller {
  const configs = ctx.informer(KUBEADM_CONFIGS);
  const machines = ctx.informer(MACHINES);
  const clusters = ctx.informer(CLUSTERS);

  async function writeConditions(config: api.KubeadmConfig, update: NewCapiCondition, extra: Partial<NonNullable<api.KubeadmConfig['status']>> = {}): Promise<void> {
    const fresh = (await ctx.client.read(KUBEADM_CONFIGS, config.metadata.name, config.metadata.namespace)) ?? config;
    const now = new Date(ctx.clock.now());
    let conditions: CapiCondition[] = setCapiCondition(fresh.status?.conditions, update, now);
    conditions = setCapiCondition(conditions, { ...update, type: KUBEADM_CONFIG_CONDITION.ready }, now);
    const status = { ...(fresh.status ?? {}), ...extra, conditions, ...(fresh.metadata.generation ? { observedGeneration: fresh.metadata.generation } : {}) };
    if (JSON.stringify(status) === JSON.stringify(fresh.status)) return;
    await ctx.client.update(KUBEADM_CONFIGS, { ...fresh, status }, 'status');
  }

  const wait = async (config: api.KubeadmConfig, w: Wait): Promise<SyncResult | void> => {
    await writeConditions(config, { type: KUBEADM_CONFIG_CONDITION.dataSecretAvailable, status: 'False', reason: w.reason, message: w.message });
    return w.requeueAfterMs ? { requeueAfterMs: w.requeueAfterMs } : undefined;
  };

  /** Takes (or finds held) the init lock for `machine`; the name of another live holder when it cannot. */
  async function takeInitLock(cluster: api.Cluster, machine: api.Machine): Promise<string | undefined> {
    const name = initLockName(cluster.metadata.name);
    const namespace = cluster.metadata.namespace;
    const lock: api.ConfigMap = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name, namespace, labels: { [LABEL.clusterName]: cluster.metadata.name }, ownerReferences: [{ ...controllerReference({ ...cluster, apiVersion: API_VERSION, kind: 'Cluster' }), controller: false }] },
      data: { [LOCK_KEY]: JSON.stringify({ machineName: machine.metadata.name }) },
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await ctx.client.create(resources.configMaps, lock);
        return undefined;
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      const held = await ctx.client.read(resources.configMaps, name, namespace);
      if (!held) continue;
      let holder = '';
      try { holder = String((JSON.parse(held.data?.[LOCK_KEY] ?? '{}') as { machineName?: string }).machineName ?? ''); } catch { /* an unreadable lock is a stale one */ }
      if (holder === machine.metadata.name) return undefined;
      if (holder && (await ctx.client.read(MACHINES, holder, namespace))) return holder;
      // The holder is gone (or unreadable): the lock is stale, as Cluster API finds it.
      await ctx.client.delete(resources.configMaps, name, namespace).catch((e) => { if (!isNotFound(e)) throw e; });
    }
    return `(the lock ${namespace}/${name} changed while being taken)`;
  }

  async function releaseInitLock(cluster: api.Cluster): Promise<void> {
    await ctx.client.delete(resources.configMaps, initLockName(cluster.metadata.name), cluster.metadata.namespace).catch((e) => { if (!isNotFound(e)) throw e; });
  }

  /** The kubeconfigs kubeadm's kubeconfig phase writes for this machine. */
  async function kubeconfigs(role: BootstrapRole, cluster: api.Cluster, ca: KeyPair, nodeName: string, token?: string): Promise<Record<string, string>> {
    const server = endpointUrl(cluster.spec?.controlPlaneEndpoint ?? {});
    const clusterName = cluster.metadata.name;
    const withCert = async (user: string, organizations: string[] = []) =>
      kubeconfigYaml({ cluster: clusterName, server, caPem: ca.certPem, user, clientCert: await issueClientCert(ca, { commonName: user, organizations }) });
    const out: Record<string, string> = {};
    for (const path of kubeconfigPaths(role)) {
      if (path === ADMIN_KUBECONFIG_PATH) out[path] = await withCert('kubernetes-admin', ['system:masters']);
      else if (path === CONTROLLER_MANAGER_KUBECONFIG) out[path] = await withCert('system:kube-controller-manager');
      else if (path === SCHEDULER_KUBECONFIG) out[path] = await withCert('system:kube-scheduler');
      else if (path === KUBELET_KUBECONFIG_PATH) out[path] = await withCert(`system:node:${nodeName}`, ['system:nodes']);
      else if (path === BOOTSTRAP_KUBELET_KUBECONFIG_PATH) out[path] = kubeconfigYaml({ cluster: clusterName, server, caPem: ca.certPem, user: 'tls-bootstrap-token-user', context: `tls-bootstrap-token-user@${clusterName}`, token });
    }
    return out;
  }

  /** The spec's file contents and password hashes kept in Secrets (contentFrom, passwdFrom). */
  async function secretInputs(config: api.KubeadmConfig): Promise<{ fileContents: Record<number, string>; passwordHashes: Record<number, string> } | Wait> {
    const read = async (ref: { name: string; key: string }): Promise<string | Wait> => {
      const secret = await ctx.client.read(resources.secrets, ref.name, config.metadata.namespace);
      const value = secret?.data?.[ref.key];
      if (value === undefined) return { reason: KUBEADM_CONFIG_REASON.notAvailable, message: `waiting for Secret ${config.metadata.namespace}/${ref.name} with key ${ref.key}`, requeueAfterMs: WAIT_MS };
      return Buffer.from(value, 'base64').toString('utf8');
    };
    const fileContents: Record<number, string> = {};
    const passwordHashes: Record<number, string> = {};
    for (const [i, f] of (config.spec?.files ?? []).entries()) {
      if (!f.contentFrom) continue;
      const v = await read(f.contentFrom.secret);
      if (typeof v !== 'string') return v;
      fileContents[i] = v;
    }
    for (const [i, u] of (config.spec?.users ?? []).entries()) {
      if (!u.passwdFrom) continue;
      const v = await read(u.passwdFrom.secret);
      if (typeof v !== 'string') return v;
      passwordHashes[i] = v;
    }
    return { fileContents, passwordHashes };
  }

  /** A join token that works in the workload cluster: the spec's, else a new one stored in the spec. */
  async function joinToken(config: api.KubeadmConfig, cluster: api.Cluster): Promise<{ token: string; config: api.KubeadmConfig } | Wait> {
    const kubeconfigName = clusterSecretName(cluster.metadata.name, 'kubeconfig');
    const secret = await ctx.client.read(resources.secrets, kubeconfigName, cluster.metadata.namespace);
    const kubeconfig = secret?.data?.value ? Buffer.from(secret.data.value, 'base64').toString('utf8') : undefined;
    if (!kubeconfig) return { reason: KUBEADM_CONFIG_REASON.waitingForWorkloadCluster, message: `waiting for Secret ${cluster.metadata.namespace}/${kubeconfigName} (the workload cluster's kubeconfig) to create a bootstrap token`, requeueAfterMs: WORKLOAD_RETRY_MS };
    // Read afresh: the token is kept in the spec, and a stale copy would make a second one.
    config = (await ctx.client.read(KUBEADM_CONFIGS, config.metadata.name, config.metadata.namespace)) ?? config;
    const existing = config.spec?.joinConfiguration?.discovery?.bootstrapToken?.token;
    const token = existing ?? `${random(6)}.${random(16)}`;
    try {
      const workload = workloadClient(kubeconfig);
      const tokenSecret = bootstrapTokenSecret(token, new Date(ctx.clock.now() + TOKEN_TTL_MS));
      const signal = AbortSignal.timeout(WORKLOAD_TIMEOUT_MS);
      const found = await workload.request<api.Secret>('GET', `/api/v1/namespaces/kube-system/secrets/${tokenSecret.metadata.name}`, { signal }).catch((e) => { if (isNotFound(e)) return undefined; throw e; });
      if (!found) await workload.request('POST', '/api/v1/namespaces/kube-system/secrets', { body: tokenSecret, signal });
    } catch (e) {
      return { reason: KUBEADM_CONFIG_REASON.waitingForWorkloadCluster, message: `waiting for the workload cluster's API at ${endpointUrl(cluster.spec?.controlPlaneEndpoint ?? {})} to create a bootstrap token: ${(e as Error).message}`, requeueAfterMs: WORKLOAD_RETRY_MS };
    }
    if (existing) return { token, config };
    const spec = config.spec ?? {};
    const join = spec.joinConfiguration ?? {};
    const updated = await ctx.client.update(KUBEADM_CONFIGS, {
      ...config,
      spec: { ...spec, joinConfiguration: { ...join, discovery: { ...(join.discovery ?? {}), bootstrapToken: { ...(join.discovery?.bootstrapToken ?? {}), token } } } },
    });
    return { token, config: updated };
  }

  async function writeDataSecret(config: api.KubeadmConfig, cluster: api.Cluster, ignition: string): Promise<void> {
    const secret: api.Secret = {
      apiVersion: 'v1', kind: 'Secret', type: CLUSTER_SECRET_TYPE,
      metadata: {
        name: config.metadata.name, namespace: config.metadata.namespace,
        labels: { [LABEL.clusterName]: cluster.metadata.name },
        ownerReferences: [controllerReference({ ...config, apiVersion: BOOTSTRAP_API_VERSION, kind: 'KubeadmConfig' })],
      },
      data: { value: Buffer.from(ignition).toString('base64'), format: Buffer.from(FORMAT.ignition).toString('base64') },
    };
    try {
      await ctx.client.create(resources.secrets, secret);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const existing = await ctx.client.get(resources.secrets, secret.metadata.name, secret.metadata.namespace);
      await ctx.client.update(resources.secrets, { ...existing, metadata: { ...existing.metadata, labels: { ...(existing.metadata.labels ?? {}), ...secret.metadata.labels } }, data: secret.data });
    }
  }

  async function reconcile(config: api.KubeadmConfig): Promise<SyncResult | void> {
    const namespace = config.metadata.namespace!;
    const owner = (config.metadata.ownerReferences ?? []).find((r) => r.kind === 'Machine');
    const machine = owner ? (machines.get(owner.name, namespace) ?? (await ctx.client.read(MACHINES, owner.name, namespace))) : undefined;
    if (!machine) return wait(config, { reason: 'WaitingForOwner', message: owner ? `waiting for Machine ${namespace}/${owner.name}` : 'waiting for a Machine to own this KubeadmConfig (spec.bootstrap.configRef)' });

    const clusterName = config.metadata.labels?.[LABEL.clusterName] ?? machine.spec.clusterName;
    const cluster = clusters.get(clusterName, namespace) ?? (await ctx.client.read(CLUSTERS, clusterName, namespace));
    if (!cluster) return wait(config, { reason: KUBEADM_CONFIG_REASON.waitingForClusterInfrastructure, message: `waiting for Cluster ${namespace}/${clusterName}`, requeueAfterMs: WAIT_MS });
    if (cluster.spec?.paused) return;

    const initialized = cluster.status?.initialization?.controlPlaneInitialized === true;
    if (initialized) await releaseInitLock(cluster);

    // Done: the data exists (the token's refresh belongs to a later step).
    if (config.status?.initialization?.dataSecretCreated && config.status.dataSecretName && (await ctx.client.read(resources.secrets, config.status.dataSecretName, namespace))) return;
    // A Machine that already names its data Secret, while this config's status does not (a `bosun
    // cluster move` or a restore brings no status): that data is this config's, and the machine
    // booted from it. Its status is written again; the data is never made anew (Cluster API's
    // KubeadmConfig reconciler does the same for a pivot).
    const named = machine.spec.bootstrap?.dataSecretName;
    if (named && !config.status?.dataSecretName && (await ctx.client.read(resources.secrets, named, namespace))) {
      await writeConditions(config, { type: KUBEADM_CONFIG_CONDITION.dataSecretAvailable, status: 'True', reason: KUBEADM_CONFIG_REASON.available, message: '' }, {
        dataSecretName: named,
        initialization: { dataSecretCreated: true },
      });
      return;
    }

    const errors = validateKubeadmConfig(defaultKubeadmConfig(config));
    if (errors.length) {
      const cloudConfig = bootstrapFormat(config.spec) === FORMAT.cloudConfig;
      const message = cloudConfig
        ? `spec.format "cloud-config" is not supported: bosun's machines boot from Ignition; set spec.format to "ignition" or leave it unset. ${errors.join('; ')}`
        : `invalid KubeadmConfig: ${errors.join('; ')}`;
      return wait(config, { reason: KUBEADM_CONFIG_REASON.invalidSpec, message });
    }
    const version = findKubernetesVersion(machine.spec.version);
    if (!version) return wait(config, { reason: KUBEADM_CONFIG_REASON.invalidSpec, message: `Machine ${machine.metadata.name}: ${unknownVersionMessage(machine.spec.version)}` });

    const network = clusterNetwork(cluster);
    const networkProblems = localNetworkProblems(network);
    if (networkProblems.length) return wait(config, { reason: KUBEADM_CONFIG_REASON.invalidClusterNetwork, message: `Cluster ${clusterName}'s networks cannot be served: ${networkProblems.join('; ')}` });

    const endpoint = cluster.spec?.controlPlaneEndpoint;
    if (cluster.status?.initialization?.infrastructureProvisioned !== true || !endpoint?.host) {
      return wait(config, { reason: KUBEADM_CONFIG_REASON.waitingForClusterInfrastructure, message: `waiting for Cluster ${clusterName}'s infrastructure to be provisioned and its spec.controlPlaneEndpoint to be set`, requeueAfterMs: WAIT_MS });
    }

    const inputs = await secretInputs(config);
    if ('reason' in inputs) return wait(config, inputs);
    const controlPlane = machine.metadata.labels?.[LABEL.controlPlane] !== undefined;
    const nodeName = machine.spec.infrastructureRef?.name ?? machine.metadata.name;
    const clusterKey = { name: clusterName, namespace };

    let role: BootstrapRole;
    let certificates: ClusterCertificates;
    let token: string | undefined;
    let current = config;
    if (!initialized) {
      if (!controlPlane) return wait(config, { reason: KUBEADM_CONFIG_REASON.waitingForControlPlaneInitialization, message: `waiting for Cluster ${clusterName}'s control plane to be initialized before a worker joins it`, requeueAfterMs: WAIT_MS });
      const holder = await takeInitLock(cluster, machine);
      if (holder) return wait(config, { reason: KUBEADM_CONFIG_REASON.waitingForInitLock, message: `waiting for Machine ${holder} to initialize the control plane (it holds the ConfigMap ${namespace}/${initLockName(clusterName)})`, requeueAfterMs: WAIT_MS });
      role = 'init';
      certificates = await lookupOrGenerateCertificates(ctx.client, clusterKey, { ...controllerReference({ ...cluster, apiVersion: API_VERSION, kind: 'Cluster' }), controller: false });
    } else {
      const found = await lookupCertificates(ctx.client, clusterKey);
      if (!found.certificates) return wait(config, { reason: KUBEADM_CONFIG_REASON.waitingForCertificates, message: `waiting for the cluster's certificate Secrets: ${found.missing.join(', ')}`, requeueAfterMs: WAIT_MS });
      certificates = found.certificates;
      const joined = await joinToken(config, cluster);
      if ('reason' in joined) return wait(config, joined);
      token = joined.token;
      current = joined.config;
      role = controlPlane ? 'join-control-plane' : 'join-worker';
    }

    const ignition = bootstrapIgnition({
      clusterName, controlPlaneEndpoint: `${endpoint.host}:${endpoint.port ?? 6443}`, nodeName, token,
      network, role, version, spec: current.spec ?? {}, certificates,
      kubeconfigs: await kubeconfigs(role, cluster, certificates.ca, nodeName, token), ...inputs,
    });
    await writeDataSecret(current, cluster, JSON.stringify(ignition));
    await writeConditions(current, { type: KUBEADM_CONFIG_CONDITION.dataSecretAvailable, status: 'True', reason: KUBEADM_CONFIG_REASON.available, message: '' }, {
      dataSecretName: current.metadata.name,
      initialization: { dataSecretCreated: true },
    });
  }

  const controller = new Controller({
    name: 'kubeadm-bootstrap-controller',
    workers: 2,
    resyncPeriodMs: 60_000,
    clock: ctx.clock,
    sync: async (key) => {
      const config = configs.getByKey(key);
      if (!config || isDeleting(config)) return;
      return reconcile(config);
    },
  });
  controller.watch(configs);
  // A Machine's owner reference or label arriving; a Cluster becoming initialized releases its waiting configs.
  controller.watch(machines, (m) => {
    const ref = m.spec?.bootstrap?.configRef;
    return ref?.kind === 'KubeadmConfig' ? `${m.metadata.namespace}/${ref.name}` : undefined;
  });
  controller.watch(clusters, (c) => configs.list().filter((k) => k.metadata.namespace === c.metadata.namespace && (k.metadata.labels?.[LABEL.clusterName] === c.metadata.name || (k.metadata.ownerReferences ?? []).some((r) => r.kind === 'Machine' && machines.get(r.name, c.metadata.namespace)?.spec.clusterName === c.metadata.name))).map((k) => `${k.metadata.namespace}/${k.metadata.name}`));
  return controller;
}
