// bosun's default catalog and its two sample operators, against the real API server with OLM's
// operators, the package server, the Deployment and ReplicaSet controllers and a kubelet stand-in:
// the payload's catalog is what src/olm/samples/catalog.ts generates and validates with its
// channel heads; subscribing from bosun-operators installs each sample in every install mode it
// declares — OwnNamespace (greeter, with the Subscription's spec.config in its Deployment),
// AllNamespaces (echo in openshift-operators' global group, copied into every namespace) and
// SingleNamespace (greeter watching another namespace, copied there only) — and the operator, run
// as its installed Deployment says (the --operator-version of its bundle, WATCH_NAMESPACE from
// olm.targetNamespaces), reconciles its resources in exactly those namespaces and writes their
// status. (The same operators run as pods on an installed cluster: test/cluster/install.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as types from '../../src/api/index.js';
import { KubeClient, Manager, loadKubeConfig, resources } from '../../src/kube/index.js';
import { loadCatalog } from '../../src/olm/fbc.js';
import { CATALOG_FILE, catalogConfigMapYaml, sampleCatalogFiles } from '../../src/olm/samples/catalog.js';
import { addEchoOperator, addGreeterOperator, echoServers, greetings } from '../../src/olm/samples/operators.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { MANIFESTS, getJson, olmCluster } from './fixture.js';

let api: TestApiServer;
let client: KubeClient;
let stop: () => Promise<void>;
const operators: Array<() => Promise<void>> = [];
before(async () => {
  ({ api, client, stop } = await olmCluster({}, { packageServer: true }));
  for (const file of ['0000_50_olm_00_namespace.yaml', CATALOG_FILE, '0000_50_olm_07_catalogsource.yaml']) await api.kubectlOk(['apply', '-f', join(MANIFESTS, file)]);
});
after(async () => {
  for (const stopOperator of operators) await stopOperator();
  await stop?.();
});

const apply = (objects: unknown[]) => api.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
const subscription = (ns: string, name: string, channel: string, config?: unknown) => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name, namespace: ns }, spec: { name, channel, source: 'bosun-operators', sourceNamespace: 'openshift-marketplace', ...(config ? { config } : {}) } });
const group = (ns: string, targets?: string[]) => ({ apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: 'og', namespace: ns }, spec: targets ? { targetNamespaces: targets } : {} });

/** The installed CSV (not a copy) once Succeeded. */
async function succeeded(ns: string, name: string): Promise<types.ClusterServiceVersion> {
  return eventually(`CSV ${ns}/${name} Succeeded`, async () => {
    const csv = await client.read(resources.clusterServiceVersions, name, ns);
    return csv?.status?.phase === 'Succeeded' && !csv.metadata.labels?.['olm.copiedFrom'] && csv;
  }, 40_000);
}

/** Runs the sample operator in this process as its installed Deployment's pods would: its args' version, its pods' olm.targetNamespaces. */
async function runAsInstalled(ns: string, deploymentName: string): Promise<{ version: string; watched: string }> {
  const deployment = await client.get(resources.deployments, deploymentName, ns);
  const container = deployment.spec!.template.spec!.containers[0];
  const [component, ...args] = container.args ?? [];
  const version = args.find((a) => a.startsWith('--operator-version='))!.split('=')[1];
  const env = container.env?.find((e) => e.name === 'WATCH_NAMESPACE');
  assert.equal(env?.valueFrom?.fieldRef?.fieldPath, "metadata.annotations['olm.targetNamespaces']");
  const watched = deployment.spec!.template.metadata!.annotations!['olm.targetNamespaces'];
  const manager = new Manager({ name: component, kubeconfig: loadKubeConfig(api.kubeconfigPath) });
  (component === 'greeter-operator' ? addGreeterOperator : addEchoOperator)(manager, { operatorVersion: version, watchNamespaces: watched });
  const stopping = new AbortController();
  const running = manager.start(stopping.signal);
  operators.push(async () => {
    stopping.abort();
    await running.catch(() => undefined);
  });
  return { version, watched };
}

test('the payload\'s default catalog is what src/olm/samples/catalog.ts generates; it validates, with two channels per sample operator and their heads', () => {
  assert.equal(readFileSync(join(MANIFESTS, CATALOG_FILE), 'utf8'), catalogConfigMapYaml(), `${CATALOG_FILE} drifted: npx tsx scripts/generate-olm-catalog.ts`);
  const catalog = loadCatalog(sampleCatalogFiles());
  const heads = Object.fromEntries([...catalog.packages.values()].map((p) => [p.name, { default: p.defaultChannel, heads: Object.fromEntries([...p.channels.values()].map((c) => [c.name, c.head])) }]));
  assert.deepEqual(heads, {
    greeter: { default: 'stable', heads: { alpha: 'greeter.v0.3.0', stable: 'greeter.v1.0.0' } },
    echo: { default: 'stable', heads: { stable: 'echo.v1.1.0', fast: 'echo.v1.2.0' } },
  });
});

test('kubectl get packagemanifests -n openshift-marketplace lists the default catalog\'s packages', async () => {
  await eventually('bosun-operators READY', async () => (await client.read(resources.catalogSources, 'bosun-operators', 'openshift-marketplace'))?.status?.connectionState?.lastObservedState === 'READY');
  const out = await eventually('the packages listed', async () => { const r = await api.kubectl(['get', 'packagemanifests', '-n', 'openshift-marketplace']); return r.code === 0 && /greeter/.test(r.stdout) && r.stdout; });
  assert.match(out, /^NAME\s+CATALOG\s+AGE\n/);
  assert.match(out, /^echo\s+bosun Operators\s+/m);
  assert.match(out, /^greeter\s+bosun Operators\s+/m);
  const echo = JSON.parse(await api.kubectlOk(['get', 'packagemanifest', 'echo', '-n', 'openshift-marketplace', '-o', 'json']));
  assert.deepEqual(echo.status.channels.map((c: { name: string; currentCSV: string }) => `${c.name}=${c.currentCSV}`).sort(), ['fast=echo.v1.2.0', 'stable=echo.v1.1.0']);
  assert.equal(echo.metadata.labels.catalog, 'bosun-operators');
});

test('OwnNamespace: greeter from bosun-operators installs with the Subscription\'s config in its Deployment; the operator reconciles Greetings of its namespace only', async () => {
  await api.kubectlOk(['create', 'namespace', 'greet']);
  await api.kubectlOk(['create', 'namespace', 'elsewhere']);
  const config = {
    env: [{ name: 'GREETER_LOG', value: 'debug' }],
    nodeSelector: { 'kubernetes.io/hostname': 'node-0' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'operators', effect: 'NoSchedule' }],
    resources: { requests: { cpu: '20m', memory: '64Mi' } },
    volumes: [{ name: 'scratch', emptyDir: {} }],
    volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
  };
  await apply([group('greet', ['greet']), subscription('greet', 'greeter', 'stable', config)]);
  const csv = await succeeded('greet', 'greeter.v1.0.0');
  assert.equal(csv.metadata.annotations?.['olm.targetNamespaces'], 'greet');
  const deployment = await client.get(resources.deployments, 'greeter-operator', 'greet');
  const pod = deployment.spec!.template.spec!;
  assert.deepEqual(pod.containers[0].env?.map((e) => e.name), ['WATCH_NAMESPACE', 'GREETER_LOG']);
  assert.deepEqual(pod.nodeSelector, config.nodeSelector);
  assert.deepEqual(pod.tolerations, config.tolerations);
  assert.deepEqual(pod.containers[0].resources, config.resources);
  assert.deepEqual(pod.volumes?.map((v) => v.name), ['scratch']);
  assert.deepEqual(pod.containers[0].volumeMounts, config.volumeMounts);
  const og = await eventually('olm.providedAPIs on the group', async () => (await client.get(resources.operatorGroups, 'og', 'greet')).metadata.annotations?.['olm.providedAPIs']);
  assert.equal(og, 'Greeting.v1.greeter.samples.bosun.io');

  const { version, watched } = await runAsInstalled('greet', 'greeter-operator');
  assert.deepEqual({ version, watched }, { version: '1.0.0', watched: 'greet' });
  await apply([
    { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'hello', namespace: 'greet' }, spec: { name: 'world', greeting: 'Hello' } },
    { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'nobody', namespace: 'greet' }, spec: {} },
    { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'unwatched', namespace: 'elsewhere' }, spec: { name: 'you' } },
  ]);
  const hello = await eventually('Greeting hello Ready', async () => { const g = await client.read(greetings, 'hello', 'greet'); return g?.status?.phase === 'Ready' && g; });
  assert.deepEqual(hello.status, { phase: 'Ready', message: 'ConfigMap hello-greeting holds the greeting', configMap: 'hello-greeting', text: 'Hello, world!', operatorVersion: '1.0.0', observedGeneration: 1 });
  assert.equal((await client.get(resources.configMaps, 'hello-greeting', 'greet')).data?.greeting, 'Hello, world!');
  const nobody = await eventually('Greeting nobody Failed', async () => { const g = await client.read(greetings, 'nobody', 'greet'); return g?.status?.phase === 'Failed' && g; });
  assert.equal(nobody.status?.message, 'spec.name is required: whom to greet');
  const table = await api.kubectlOk(['get', 'greetings', '-n', 'greet']);
  assert.match(table, /^hello\s+Hello, world!\s+Ready\s+1\.0\.0\s+/m);
  // The other namespace is not this operator's: its Greeting is never touched.
  assert.equal((await client.get(greetings, 'unwatched', 'elsewhere')).status, undefined);
  assert.equal(await client.read(resources.configMaps, 'unwatched-greeting', 'elsewhere'), undefined);
});

test('AllNamespaces: echo in openshift-operators (the global group) is copied into every namespace, and its operator runs EchoServers anywhere', async () => {
  await apply([subscription('openshift-operators', 'echo', 'fast')]);
  const csv = await succeeded('openshift-operators', 'echo.v1.2.0');
  assert.equal(csv.metadata.annotations?.['olm.targetNamespaces'], '');
  const copy = await eventually('the copy in default', async () => { const c = await client.read(resources.clusterServiceVersions, 'echo.v1.2.0', 'default'); return c?.status?.phase === 'Succeeded' && c; });
  assert.equal(copy.metadata.labels?.['olm.copiedFrom'], 'openshift-operators');
  assert.equal(copy.status?.reason, 'Copied');
  assert.equal(copy.status?.message, 'The operator is running in openshift-operators but is managing this namespace');
  const copies = JSON.parse(await api.kubectlOk(['get', 'csv', '-A', '-l', 'olm.copiedFrom=openshift-operators', '-o', 'json'])).items.map((c: types.ClusterServiceVersion) => c.metadata.namespace);
  for (const ns of ['default', 'greet', 'elsewhere', 'openshift-marketplace']) assert.ok(copies.includes(ns), `a copy in ${ns} (have ${copies.join(', ')})`);
  assert.ok(!copies.includes('openshift-operators'));
  assert.equal((await client.get(resources.operatorGroups, 'global-operators', 'openshift-operators')).metadata.annotations?.['olm.providedAPIs'], 'EchoServer.v1.echo.samples.bosun.io');

  const { version, watched } = await runAsInstalled('openshift-operators', 'echo-operator');
  assert.deepEqual({ version, watched }, { version: '1.2.0', watched: '' });
  await apply([{ apiVersion: 'echo.samples.bosun.io/v1', kind: 'EchoServer', metadata: { name: 'web', namespace: 'elsewhere' }, spec: { replicas: 2 } }]);
  const web = await eventually('EchoServer web Ready', async () => { const e = await client.read(echoServers, 'web', 'elsewhere'); return e?.status?.phase === 'Ready' && e; }, 40_000);
  assert.deepEqual(web.status, { phase: 'Ready', message: '2 of 2 echo pods ready behind Service web-echo', readyReplicas: 2, service: 'web-echo', operatorVersion: '1.2.0', observedGeneration: 1 });
  const deployment = await client.get(resources.deployments, 'web-echo', 'elsewhere');
  assert.equal(deployment.spec?.template.spec?.containers[0].image, 'bosun.local/echo');
  assert.equal((await client.get(resources.services, 'web-echo', 'elsewhere')).spec?.ports?.[0].port, 8080);
  await apply([{ apiVersion: 'echo.samples.bosun.io/v1', kind: 'EchoServer', metadata: { name: 'too-many', namespace: 'default' }, spec: { replicas: 50 } }]);
  const bad = await eventually('EchoServer too-many Failed', async () => { const e = await client.read(echoServers, 'too-many', 'default'); return e?.status?.phase === 'Failed' && e; });
  assert.equal(bad.status?.message, 'spec.replicas must be a whole number from 0 to 10, got 50');
});

test('SingleNamespace: greeter in one namespace serving another is copied there only, and reconciles Greetings there only', async () => {
  await api.kubectlOk(['create', 'namespace', 'ops']);
  await api.kubectlOk(['create', 'namespace', 'team']);
  await apply([group('ops', ['team']), subscription('ops', 'greeter', 'alpha')]);
  const csv = await succeeded('ops', 'greeter.v0.3.0');
  assert.equal(csv.metadata.annotations?.['olm.targetNamespaces'], 'team');
  const copy = await eventually('the copy in team', () => client.read(resources.clusterServiceVersions, 'greeter.v0.3.0', 'team'));
  assert.equal(copy.metadata.labels?.['olm.copiedFrom'], 'ops');
  assert.equal(await client.read(resources.clusterServiceVersions, 'greeter.v0.3.0', 'greet'), undefined, 'no copy outside the group\'s targets');
  // Its Role is made in the target namespace too, so that the operator may act there.
  assert.ok(await client.read(resources.roles, 'greeter.v0.3.0-greeter-operator', 'team'));

  const { version, watched } = await runAsInstalled('ops', 'greeter-operator');
  assert.deepEqual({ version, watched }, { version: '0.3.0', watched: 'team' });
  await apply([
    { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'hi', namespace: 'team' }, spec: { name: 'team', greeting: 'Hi' } },
    { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'mine', namespace: 'ops' }, spec: { name: 'ops' } },
  ]);
  const hi = await eventually('Greeting hi Ready', async () => { const g = await client.read(greetings, 'hi', 'team'); return g?.status?.operatorVersion === '0.3.0' && g; });
  assert.equal(hi.status?.text, 'Hi, team!');
  // The OwnNamespace greeter (1.0.0, watching greet) and this one (watching team) leave ops alone.
  assert.equal((await client.get(greetings, 'mine', 'ops')).status, undefined);
  // Deleting the group's target: the copy goes.
  await api.kubectlOk(['patch', 'og', 'og', '-n', 'ops', '--type', 'merge', '-p', '{"spec":{"targetNamespaces":["ops"]}}']);
  await eventually('the copy in team gone', async () => !(await client.read(resources.clusterServiceVersions, 'greeter.v0.3.0', 'team')));
});

test('the sample operators refuse a version that is not one', async () => {
  const { runBosun } = await import('../helpers/cli.js');
  const r = await runBosun(['greeter-operator', '--kubeconfig', api.kubeconfigPath, '--operator-version', 'latest']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--operator-version must be a semantic version such as 1\.0\.0, got "latest"/);
  assert.ok(await getJson(api, ['crd', 'greetings.greeter.samples.bosun.io']));
});
