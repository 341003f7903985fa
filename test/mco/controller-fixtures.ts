// Shared inputs for the machine-config controller tests: a ControllerConfig, the API server with
// the payload's machine-config CRDs applied, the pools OpenShift creates, Nodes as a booted
// machine has them, and polling.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repositoryRoot } from '../../src/cli/release.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import type { ControllerConfig, MachineConfigPool } from '../../src/mco/controller/types.js';
import { eventually } from '../helpers/eventually.js';

export const TEST_CA = '-----BEGIN CERTIFICATE-----\nMIIBbosunTESTca\n-----END CERTIFICATE-----\n';
export const MCO = '/apis/machineconfiguration.openshift.io/v1';

export function controllerConfig(extra: Partial<ControllerConfig['spec']> = {}): ControllerConfig {
  return {
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'ControllerConfig',
    metadata: { name: 'machine-config-controller', uid: 'cc-uid' },
    spec: {
      clusterDNSIP: '172.30.0.10',
      cloudProviderConfig: '',
      ipFamilies: 'IPv4',
      kubeAPIServerServingCAData: Buffer.from(TEST_CA).toString('base64'),
      rootCAData: Buffer.from(TEST_CA).toString('base64'),
      releaseImage: 'quay.io/bosun/release:4.16.0',
      images: { infraImageKey: 'quay.io/bosun/pause:3.9' },
      ...extra,
    },
  };
}

/** The master and worker pools as OpenShift creates them. */
export function builtInPools(workerMaxUnavailable?: number | string): MachineConfigPool[] {
  return ['master', 'worker'].map((role) => ({
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool',
    metadata: { name: role, labels: { 'machineconfiguration.openshift.io/mco-built-in': '', [`pools.operator.machineconfiguration.openshift.io/${role}`]: '' } },
    spec: {
      machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': role } },
      nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${role}`]: '' } },
      paused: false,
      ...(role === 'worker' && workerMaxUnavailable !== undefined ? { maxUnavailable: workerMaxUnavailable } : {}),
    },
  }));
}

/** A Ready worker Node as the machine-config server's node-annotations.json leaves it. */
export function workerNode(name: string, rendered: string, zone: string) {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name,
      labels: { 'node-role.kubernetes.io/worker': '', 'topology.kubernetes.io/zone': zone },
      annotations: {
        'machineconfiguration.openshift.io/currentConfig': rendered,
        'machineconfiguration.openshift.io/desiredConfig': rendered,
        'machineconfiguration.openshift.io/state': 'Done',
      },
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** The embedded API server with the payload's machine-config CRDs. */
export async function startMcoApiServer(): Promise<TestApiServer> {
  const api = await startTestApiServer();
  const dir = join(repositoryRoot, 'release-payload/manifests');
  for (const file of readdirSync(dir).filter((f) => f.startsWith('0000_80_machine-config_01_') && f.endsWith('.crd.yaml'))) {
    const r = await api.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: parseYaml(readFileSync(join(dir, file), 'utf8')) });
    if (r.status !== 201) throw new Error(`creating ${file}: ${r.status} ${r.text}`);
  }
  return api;
}

/** eventually() at the pace these scenarios were written for: every 40 ms, for up to 10 s. */
export function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  return eventually(what, probe, { timeoutMs, intervalMs: 40 });
}

/** The API object or a thrown error naming the status. */
export async function getJson(api: TestApiServer, path: string): Promise<any> {
  const r = await api.request('GET', path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.json;
}

export async function send(api: TestApiServer, method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
  const r = await api.request(method, path, { body, contentType });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
