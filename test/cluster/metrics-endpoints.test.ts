// Every component's metrics endpoint, as the payload and the operators' rendered workloads wire
// it: the Service of the table (port `metrics`, annotated for a serving certificate) selects the
// component's pods; their container listens with --metrics-listen on that port, on the pod's
// address (the node's, on the host network), with --tls-cert-file/--tls-private-key-file from the
// very Secret the Service asks the service CA for; and no two host-network pods that can share a
// master bind the same port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type * as api from '../../src/api/index.js';
import { ccmOperands } from '../../src/ccm-operator/operator/operands.js';
import { controllerDeployment, daemonDaemonSet } from '../../src/mco/operator/operator.js';

const manifests = join(import.meta.dirname, '../../release-payload/manifests');
const payload: api.KubeObject[] = readdirSync(manifests).filter((f) => f.endsWith('.yaml')).flatMap((f) => parseAllDocuments(readFileSync(join(manifests, f), 'utf8')).map((d) => d.toJS() as api.KubeObject)).filter(Boolean);
const find = <T extends api.KubeObject>(kind: string, namespace: string, name: string) => payload.find((o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name) as T | undefined;

const ccm = ccmOperands({ provider: 'local', name: 'local', image: 'i', cloudConfig: 'c' });
const TABLE: Array<{ component: string; namespace: string; service: string; port: number; secret: string; workload: api.Deployment | api.DaemonSet | undefined; serviceObject?: api.Service }> = [
  { component: 'cluster-version-operator', namespace: 'openshift-cluster-version', service: 'cluster-version-operator', port: 9099, secret: 'cluster-version-operator-serving-cert', workload: find('Deployment', 'openshift-cluster-version', 'cluster-version-operator') },
  { component: 'machine-config-operator', namespace: 'openshift-machine-config-operator', service: 'machine-config-operator', port: 9001, secret: 'mco-proxy-tls', workload: find('Deployment', 'openshift-machine-config-operator', 'machine-config-operator') },
  { component: 'machine-config-controller', namespace: 'openshift-machine-config-operator', service: 'machine-config-controller', port: 9001, secret: 'mcc-proxy-tls', workload: controllerDeployment('i', [], []) },
  { component: 'machine-config-daemon', namespace: 'openshift-machine-config-operator', service: 'machine-config-daemon', port: 9001, secret: 'proxy-tls', workload: daemonDaemonSet('i', []) },
  { component: 'cluster-cloud-controller-manager-operator', namespace: 'openshift-cloud-controller-manager-operator', service: 'cluster-cloud-controller-manager-operator', port: 9258, secret: 'cluster-cloud-controller-manager-operator-tls', workload: find('Deployment', 'openshift-cloud-controller-manager-operator', 'cluster-cloud-controller-manager-operator') },
  { component: 'cloud-controller-manager', namespace: 'openshift-cloud-controller-manager', service: 'cloud-controller-manager', port: 10258, secret: 'cloud-controller-manager-tls', workload: ccm.deployment, serviceObject: ccm.service },
  { component: 'cluster-api-controllers', namespace: 'openshift-cluster-api', service: 'capi-controllers', port: 8443, secret: 'capi-controllers-tls', workload: find('Deployment', 'openshift-cluster-api', 'cluster-api-controllers') },
];

for (const row of TABLE) {
  test(`${row.component}: Service ${row.namespace}/${row.service}:${row.port}, Secret ${row.secret}, HTTPS on the pod's address`, () => {
    const service = row.serviceObject ?? find<api.Service>('Service', row.namespace, row.service);
    assert.ok(service, 'the Service exists');
    assert.equal(service.metadata.namespace, row.namespace);
    assert.equal(service.metadata.annotations?.['service.beta.openshift.io/serving-cert-secret-name'], row.secret);
    assert.deepEqual(service.spec?.ports?.filter((p) => p.name === 'metrics').map((p) => [p.name, p.port, p.targetPort ?? p.port]), [['metrics', row.port, row.port]]);
    assert.ok(row.workload, 'the workload exists');
    const template = row.workload.spec!.template;
    const labels = template.metadata?.labels ?? {};
    assert.ok(Object.entries(service.spec?.selector ?? {}).every(([k, v]) => labels[k] === v), `the selector ${JSON.stringify(service.spec?.selector)} picks the pods (${JSON.stringify(labels)})`);
    const container = template.spec!.containers[0];
    const argv = [...(container.command ?? []), ...(container.args ?? [])];
    const flag = (name: string) => argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
    const address = template.spec?.hostNetwork ? '$(HOST_IP)' : '$(POD_IP)';
    assert.equal(flag('--metrics-listen'), `${address}:${row.port}`);
    const variable = (container.env ?? []).find((e) => `$(${e.name})` === address);
    assert.equal(variable?.valueFrom?.fieldRef?.fieldPath, template.spec?.hostNetwork ? 'status.hostIP' : 'status.podIP');
    const cert = flag('--tls-cert-file');
    const key = flag('--tls-private-key-file');
    assert.ok(cert && key, 'both certificate flags');
    const mount = (container.volumeMounts ?? []).find((m) => cert.startsWith(`${m.mountPath}/`) && key.startsWith(`${m.mountPath}/`));
    assert.ok(mount, 'the certificate files are in a mounted volume');
    assert.deepEqual(cert.slice(mount.mountPath.length + 1), 'tls.crt');
    assert.deepEqual(key.slice(mount.mountPath.length + 1), 'tls.key');
    const volume = template.spec?.volumes?.find((v) => v.name === mount.name);
    assert.equal(volume?.secret?.secretName, row.secret, 'the Secret the Service asks for');
  });
}

test('no two host-network listeners on a master share a port (the node agent, the machine-config server, the metrics endpoints)', () => {
  const hostPorts = new Map<number, string>([[10250, 'node agent'], [22623, 'machine-config-server'], [22624, 'machine-config-server']]);
  for (const row of TABLE) {
    if (!row.workload?.spec?.template.spec?.hostNetwork) continue;
    const taken = hostPorts.get(row.port);
    assert.equal(taken, undefined, `${row.component} and ${taken} both bind the node's ${row.port}`);
    hostPorts.set(row.port, row.component);
  }
  assert.deepEqual([...hostPorts.keys()].sort((a, b) => a - b), [9001, 9099, 9258, 10250, 10258, 22623, 22624]);
});

test('the components that are not cluster-admin may ask the API server about their callers (system:auth-delegator)', () => {
  const delegators = payload.filter((o): o is api.ClusterRoleBinding => o.kind === 'ClusterRoleBinding' && (o as api.ClusterRoleBinding).roleRef.name === 'system:auth-delegator').flatMap((b) => (b.subjects ?? []).map((s) => `${s.namespace}/${s.name}`));
  for (const account of ['openshift-machine-config-operator/machine-config-controller', 'openshift-machine-config-operator/machine-config-daemon', 'openshift-cloud-controller-manager-operator/cluster-cloud-controller-manager', 'openshift-cloud-controller-manager/cloud-controller-manager', 'openshift-cluster-api/cluster-api-controllers']) {
    assert.ok(delegators.includes(account), `${account} is bound to system:auth-delegator`);
  }
});
