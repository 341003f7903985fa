// Cluster states for the `bosun adm upgrade status` tests, built the way OpenShift clusters look
// mid-update (modelled on the states `oc adm upgrade status` is tested with): a ClusterVersion with
// its history and conditions, platform ClusterOperators, MachineConfigPools, the rendered
// MachineConfigs with their release versions, and Nodes with the machine-config daemon's
// annotations. Times are minutes before `now`.
import type * as api from '../../src/api/index.js';
import type { ClusterState } from '../../src/views/upgrade-status/status.js';

export const NOW = Date.parse('2026-03-02T12:00:00Z');
/** An RFC 3339 time `m` minutes (and `s` seconds) before NOW. */
export const ago = (m: number, s = 0, now = NOW) => new Date(now - m * 60_000 - s * 1000).toISOString().replace('.000Z', 'Z');

const M = 'machineconfiguration.openshift.io';
const PLATFORM = { 'include.release.openshift.io/self-managed-high-availability': 'true', 'include.release.openshift.io/single-node-developer': 'true' };

type Cond = [status: string, since: string, reason?: string, message?: string];
const condition = (type: string, [status, lastTransitionTime, reason, message]: Cond) => ({ type, status, lastTransitionTime, ...(reason ? { reason } : {}), ...(message ? { message } : {}) });

export interface HistoryEntry { state: 'Partial' | 'Completed'; version: string; started: string; completed?: string; image?: string }
export function clusterVersion(desired: string, history: HistoryEntry[], o: { progressing?: Cond; failing?: Cond | null } = {}): api.ClusterVersion {
  return {
    apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '7f7c1f2e-0000-4000-8000-000000000001' },
    status: {
      desired: { version: desired, image: `quay.io/openshift-release-dev/ocp-release:${desired}` },
      conditions: [
        condition('Available', ['True', ago(600), '', `Done applying ${history.find((h) => h.state === 'Completed')?.version ?? desired}`]),
        ...(o.failing === null ? [] : [condition('Failing', o.failing ?? ['False', ago(600)])]),
        condition('Progressing', o.progressing ?? ['True', history[0].started, '', `Working towards ${desired}`]),
      ],
      history: history.map((h) => ({ state: h.state, version: h.version, image: h.image ?? `quay.io/openshift-release-dev/ocp-release:${h.version}`, startedTime: h.started, completionTime: h.completed ?? null, verified: true })),
      availableUpdates: [], observedGeneration: 1, versionHash: 'abc',
    },
  };
}

export interface OperatorSpec { version: string; available?: Cond; degraded?: Cond; progressing?: Cond; platform?: boolean }
export function clusterOperator(name: string, o: OperatorSpec): api.ClusterOperator {
  return {
    apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name, ...(o.platform === false ? {} : { annotations: PLATFORM }) }, spec: {},
    status: {
      conditions: [
        condition('Available', o.available ?? ['True', ago(900), 'AsExpected']),
        condition('Degraded', o.degraded ?? ['False', ago(900), 'AsExpected']),
        condition('Progressing', o.progressing ?? ['False', ago(900), 'AsExpected']),
      ],
      versions: [{ name: 'operator', version: o.version }],
    },
  };
}

/** `n` healthy platform operators at `version`, named after OpenShift's. */
export function operators(n: number, version: string): api.ClusterOperator[] {
  const names = ['authentication', 'baremetal', 'cloud-controller-manager', 'cloud-credential', 'cluster-autoscaler', 'config-operator', 'console', 'control-plane-machine-set', 'csi-snapshot-controller', 'dns', 'etcd', 'image-registry', 'ingress', 'insights', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-storage-version-migrator', 'machine-api', 'machine-approver', 'marketplace', 'monitoring', 'network', 'node-tuning', 'openshift-apiserver', 'openshift-controller-manager', 'openshift-samples', 'operator-lifecycle-manager', 'operator-lifecycle-manager-catalog', 'operator-lifecycle-manager-packageserver', 'service-ca', 'storage'];
  return names.slice(0, n).map((name) => clusterOperator(name, { version }));
}

export const machineConfig = (name: string, version: string): api.MachineConfig => ({
  apiVersion: `${M}/v1`, kind: 'MachineConfig', metadata: { name, annotations: { [`${M}/release-image-version`]: version, [`${M}/generated-by-controller-version`]: 'abc' } }, spec: { config: { ignition: { version: '3.4.0' } } },
});

export const pool = (name: string, config: string, paused = false): api.MachineConfigPool => ({
  apiVersion: `${M}/v1`, kind: 'MachineConfigPool', metadata: { name },
  spec: { paused, configuration: { name: config }, machineConfigSelector: { matchLabels: { [`${M}/role`]: name } }, nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${name}`]: '' } } },
});

export interface NodeSpec { current: string; desired?: string; state?: string; reason?: string; drain?: [desired: string, applied: string]; ready?: Cond; unschedulable?: boolean }
export function node(name: string, role: string, o: NodeSpec): api.Node {
  const a: Record<string, string> = { currentConfig: o.current, desiredConfig: o.desired ?? o.current, state: o.state ?? 'Done', reason: o.reason ?? '' };
  if (o.drain) [a.desiredDrain, a.lastAppliedDrain] = o.drain;
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { [`node-role.kubernetes.io/${role}`]: '', 'kubernetes.io/hostname': name }, annotations: Object.fromEntries(Object.entries(a).map(([k, v]) => [`${M}/${k}`, v])) },
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: { conditions: [condition('Ready', o.ready ?? ['True', ago(900), 'KubeletReady', 'kubelet is posting ready status'])] },
  };
}

/** A node the daemon is draining for `to`. */
export const draining = (from: string, to: string): NodeSpec => ({ current: from, desired: to, state: 'Working', drain: [`drain-${to}`, `uncordon-${from}`], unschedulable: true });

export function state(s: Partial<ClusterState> & Pick<ClusterState, 'cv' | 'operators'>): ClusterState {
  return { pools: [], machineConfigs: [], nodes: [], mcoImage: '', ...s };
}

const masters = (config: string, n = 3) => Array.from({ length: n }, (_, i) => node(`master-${i}`, 'master', { current: config }));
const workers = (config: string, n = 2, prefix = 'worker') => Array.from({ length: n }, (_, i) => node(`${prefix}-${i}`, prefix === 'worker' ? 'worker' : prefix, { current: config }));

/**
 * Two hours into 4.14.0 → 4.14.1, when the previous update took 70 minutes: every operator but
 * machine-config updated, etcd and kube-apiserver degraded for an hour, control-plane-machine-set
 * unavailable, the CVO failing; the nodes not started. One non-platform operator goes Progressing.
 */
export function stalled(): ClusterState {
  const ops = operators(32, '4.14.1').map((o) => {
    const name = o.metadata.name;
    if (name === 'etcd' || name === 'kube-apiserver') {
      return clusterOperator(name, { version: '4.14.1', degraded: ['True', ago(58, name === 'etcd' ? 38 : 18), 'NodeController_MasterNodesReady', 'NodeControllerDegraded: The master nodes not ready: node "master-1" not ready since 2026-03-02 11:01:42 +0000 UTC because KubeletNotReady'] });
    }
    if (name === 'control-plane-machine-set') return clusterOperator(name, { version: '4.14.1', available: ['False', ago(60, 17), 'UnavailableReplicas', 'Missing 1 available replica(s)'] });
    // Updated, and rolling its daemon set out on the nodes: not an updating operator for oc.
    if (name === 'network') return clusterOperator(name, { version: '4.14.1', progressing: ['True', ago(3), 'Deploying', 'DaemonSet "/openshift-multus/multus" is not available'] });
    return o;
  });
  return state({
    cv: clusterVersion('4.14.1', [
      { state: 'Partial', version: '4.14.1', started: ago(119, 30) },
      { state: 'Completed', version: '4.14.0', started: ago(600), completed: ago(530) },
      { state: 'Completed', version: '4.13.0', started: ago(2000), completed: ago(1960) },
    ], { failing: ['True', ago(0), 'ClusterOperatorsDegraded', 'Cluster operators etcd, kube-apiserver are degraded'], progressing: ['True', ago(119, 30), 'ClusterOperatorsDegraded', 'Unable to apply 4.14.1: wait has exceeded 40 minutes for these operators: etcd, kube-apiserver'] }),
    operators: [
      ...ops,
      clusterOperator('machine-config', { version: '4.14.0', progressing: ['True', ago(64, 41), '', 'Working towards 4.14.1'] }),
      clusterOperator('example-addon', { version: '1.2.0', platform: false, progressing: ['True', ago(10), 'Reconciling', 'not a release payload operator'] }),
    ],
    pools: [pool('master', 'rendered-master-new'), pool('worker', 'rendered-worker-new')],
    machineConfigs: [machineConfig('rendered-master-old', '4.14.0'), machineConfig('rendered-master-new', '4.14.1'), machineConfig('rendered-worker-old', '4.14.0'), machineConfig('rendered-worker-new', '4.14.1')],
    nodes: [...masters('rendered-master-old'), ...workers('rendered-worker-old')],
  });
}

/** 28 minutes in: 30 of 33 operators updated, 3 waiting, nothing wrong. */
export function mostlyUpdated(): ClusterState {
  const ops = operators(32, '4.17.0').map((o, i) => (i < 3 ? clusterOperator(o.metadata.name, { version: '4.16.0' }) : o));
  return state({
    cv: clusterVersion('4.17.0', [{ state: 'Partial', version: '4.17.0', started: ago(28, 2) }, { state: 'Completed', version: '4.16.0', started: ago(2000), completed: ago(1950) }]),
    operators: [...ops, clusterOperator('machine-config', { version: '4.17.0', progressing: ['False', ago(2), 'AsExpected'] })],
    pools: [pool('master', 'rendered-master-new')],
    machineConfigs: [machineConfig('rendered-master-old', '4.16.0'), machineConfig('rendered-master-new', '4.17.0')],
    nodes: masters('rendered-master-old'),
  });
}

/** An update to 4.15.0-ec.2 started 89 s after one to 4.14.1 that never completed. */
export function overIncomplete(): ClusterState {
  const ops = operators(32, '4.14.1').map((o) => {
    const name = o.metadata.name;
    if (name === 'etcd') return clusterOperator(name, { version: '4.14.1', progressing: ['True', ago(0, 45), 'NodeInstaller', 'NodeInstallerProgressing: 2 nodes are at revision 33; 1 node is at revision 34'] });
    if (name === 'kube-apiserver') return clusterOperator(name, { version: '4.14.1', progressing: ['True', ago(6, 8), 'NodeInstaller::StaticPods', 'NodeInstallerProgressing: 3 nodes are at revision 274\nStaticPodsProgressing: waiting for revision 276'] });
    if (name === 'authentication') return clusterOperator(name, { version: '4.15.0-ec.2' });
    return o;
  });
  return state({
    cv: clusterVersion('4.15.0-ec.2', [
      { state: 'Partial', version: '4.15.0-ec.2', started: ago(1, 29) },
      { state: 'Partial', version: '4.14.1', started: ago(30) },
      { state: 'Completed', version: '4.14.0-rc.7', started: ago(3000), completed: ago(2930) },
      { state: 'Completed', version: '4.14.0-rc.3', started: ago(9000), completed: ago(8960) },
    ]),
    operators: [...ops, clusterOperator('machine-config', { version: '4.14.1' })],
    pools: [pool('master', 'rendered-master-a'), pool('worker', 'rendered-worker-a')],
    machineConfigs: [machineConfig('rendered-master-a', '4.14.1'), machineConfig('rendered-worker-a', '4.14.1')],
    nodes: [...masters('rendered-master-a'), ...workers('rendered-worker-a')],
  });
}

/** bosun's own 1.0.0 → 1.0.1 with the worker pool paused: the first master draining. */
export function pausedWorkers(now = NOW): ClusterState {
  const at = (m: number, s = 0) => ago(m, s, now);
  return state({
    cv: clusterVersion('1.0.1', [{ state: 'Partial', version: '1.0.1', started: at(3, 12) }, { state: 'Completed', version: '1.0.0', started: at(60), completed: at(50) }]),
    operators: [
      clusterOperator('cloud-controller-manager', { version: '1.0.1', progressing: ['False', at(2, 40)] }),
      clusterOperator('cluster-api', { version: '1.0.1', progressing: ['False', at(2, 10)] }),
      clusterOperator('machine-config', { version: '1.0.0', progressing: ['True', at(1, 30), '', 'Working towards 1.0.1'] }),
    ],
    pools: [pool('master', 'rendered-master-new'), pool('worker', 'rendered-worker-new', true)],
    machineConfigs: [machineConfig('rendered-master-old', '1.0.0'), machineConfig('rendered-master-new', '1.0.1'), machineConfig('rendered-worker-old', '1.0.0')],
    nodes: [
      node('master-0', 'master', draining('rendered-master-old', 'rendered-master-new')),
      ...workers('rendered-worker-old'),
    ],
    mcoImage: 'bosun.local/machine-config-operator:1.0.0',
  });
}

/**
 * The control plane done, a large worker pool rolling: nodes draining, rebooting, updated, one
 * degraded (a drain that timed out), one not ready, one cordoned by hand; an empty custom pool.
 */
export function workersRolling(): ClusterState {
  const to = 'rendered-worker-new';
  const from = 'rendered-worker-old';
  const nodes = [
    ...Array.from({ length: 8 }, (_, i) => node(`worker-a-${i}`, 'worker', { current: to })),
    ...Array.from({ length: 4 }, (_, i) => node(`worker-b-${i}`, 'worker', { current: from })),
    node('worker-c-0', 'worker', draining(from, to)),
    node('worker-c-1', 'worker', { current: from, desired: to, state: 'Rebooting', ready: ['False', ago(1), 'KubeletNotReady', 'node is shutting down'] }),
    node('worker-c-2', 'worker', { ...draining(from, to), state: 'Degraded', reason: 'failed to drain node: worker-c-2 after 1 hour. Please see machine-config-controller logs for more information' }),
    node('worker-c-3', 'worker', { current: from, ready: ['False', ago(22, 44), 'NodeStatusUnknown', 'Kubelet stopped posting node status.'] }),
    node('worker-c-4', 'worker', { current: to, unschedulable: true }),
  ];
  return state({
    cv: clusterVersion('4.16.0-ec.3', [
      { state: 'Completed', version: '4.16.0-ec.3', started: ago(240), completed: ago(29) },
      { state: 'Completed', version: '4.16.0-ec.2', started: ago(3000), completed: ago(2900) },
    ], { progressing: ['False', ago(29), '', 'Cluster version is 4.16.0-ec.3'] }),
    operators: [...operators(32, '4.16.0-ec.3'), clusterOperator('machine-config', { version: '4.16.0-ec.3', degraded: ['True', ago(8, 55), 'RequiredPoolsFailed', 'Failed to resync 4.16.0-ec.3 because: error during syncRequiredMachineConfigPools'] })],
    pools: [pool('master', 'rendered-master-new'), pool('worker', to), pool('zinfra', 'rendered-zinfra-new')],
    machineConfigs: [machineConfig('rendered-master-new', '4.16.0-ec.3'), machineConfig(from, '4.16.0-ec.2'), machineConfig(to, '4.16.0-ec.3')],
    nodes: [...masters('rendered-master-new'), ...nodes],
  });
}
