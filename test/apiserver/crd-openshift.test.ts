// OpenShift's own CRDs (test/apiserver/fixtures/openshift-*.crd.yaml, from openshift/api with the
// descriptions removed) install with kubectl and take OpenShift-shaped objects, status included:
// MachineConfigPool's int-or-string maxUnavailable (anyOf integer/string), ClusterVersion's
// required-and-nullable status.availableUpdates as the CVO writes it through client-node, nulls
// in non-nullable fields pruned before the required check, list-type map keys unique. A CRD that
// is not structural is refused with kube-apiserver's field errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const mcoFixture = (name: string) => fileURLToPath(new URL(`../mco/fixtures/${name}`, import.meta.url));
const MCP = { group: 'machineconfiguration.openshift.io', version: 'v1', plural: 'machineconfigpools' };
const CV = { group: 'config.openshift.io', version: 'v1', plural: 'clusterversions' };

let api: TestApiServer;
let custom: k8s.CustomObjectsApi;
before(async () => {
  api = await startTestApiServer();
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfigPath);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
});
after(async () => {
  await api.stop();
});

/** The Status of a refused client-node call. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string; causes: { reason: string; field: string; message: string }[] }> {
  try {
    await call;
  } catch (e) {
    const err = e as { code: number; body: string };
    const status = JSON.parse(err.body);
    return { code: err.code, message: status.message, causes: status.details?.causes ?? [] };
  }
  return assert.fail('expected the API server to refuse the request');
}

test('OpenShift CRDs install with kubectl and become Established', async () => {
  const out = await api.kubectlOk(['apply', '-f', fixture('openshift-machineconfigpools.crd.yaml'), '-f', fixture('openshift-clusterversions.crd.yaml')]);
  assert.match(out, /machineconfigpools\.machineconfiguration\.openshift\.io created/);
  assert.match(out, /clusterversions\.config\.openshift\.io created/);
  await api.kubectlOk(['wait', '--for=condition=Established', 'crd/machineconfigpools.machineconfiguration.openshift.io', 'crd/clusterversions.config.openshift.io', '--timeout=10s']);
});

/** The pools of an OpenShift cluster, without the identity their old cluster gave them. */
function openshiftPools(): string {
  return parseAllDocuments(readFileSync(mcoFixture('openshift-machineconfigpools.yaml'), 'utf8'))
    .map((d) => {
      const pool = d.toJS();
      for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'generation']) delete pool.metadata[field];
      return stringify(pool);
    })
    .join('---\n');
}

test('MachineConfigPools from an OpenShift cluster: int-or-string maxUnavailable, status through the subresource', async () => {
  await api.kubectlOk(['create', '-f', '-'], openshiftPools());
  await api.kubectlOk(['replace', '--subresource=status', '-f', '-'], openshiftPools());
  const worker = JSON.parse(await api.kubectlOk(['get', 'mcp', 'worker', '-o', 'json']));
  assert.equal(worker.spec.maxUnavailable, 1);
  assert.equal(worker.status.machineCount, 3);
  assert.equal(worker.status.conditions.find((c: { type: string }) => c.type === 'Updated')?.status, 'True');
  const infra = JSON.parse(await api.kubectlOk(['get', 'mcp', 'infra', '-o', 'json']));
  assert.equal(infra.spec.maxUnavailable, '30%');

  for (const [value, type] of [[true, 'boolean'], [1.5, 'number'], [{ n: 1 }, 'object']] as const) {
    const r = await refusal(custom.patchClusterCustomObject({ ...MCP, name: 'worker', body: { spec: { maxUnavailable: value } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)));
    assert.equal(r.code, 422, JSON.stringify(value));
    assert.equal(r.causes[0].field, 'spec.maxUnavailable');
    assert.equal(r.causes[0].message, `Invalid value: "${type}": spec.maxUnavailable in body must be of type integer,string: "${type}"`);
  }
});

test('a null in a non-nullable field is pruned (map values too); a nullable one is kept', async () => {
  const pool = {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfigPool',
    metadata: { name: 'nulls' },
    spec: { paused: null, maxUnavailable: null, nodeSelector: { matchLabels: { 'node-role.kubernetes.io/nulls': '', stale: null } } },
  };
  const created = (await custom.createClusterCustomObject({ ...MCP, body: pool })) as typeof pool;
  assert.deepEqual(created.spec, { nodeSelector: { matchLabels: { 'node-role.kubernetes.io/nulls': '' } } });
});

test('ClusterVersion status as the CVO writes it: availableUpdates required and nullable', async () => {
  await custom.createClusterCustomObject({ ...CV, body: { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '6a8c2e4b-1f3d-4e5a-9b7c-0d1e2f3a4b5c', channel: 'stable-4.16' } } });
  const cv = (await custom.getClusterCustomObject({ ...CV, name: 'version' })) as Record<string, any>;
  const desired = { version: '4.16.3', image: 'quay.io/openshift-release-dev/ocp-release@sha256:' + 'a'.repeat(64) };
  const status = {
    availableUpdates: null,
    desired,
    observedGeneration: 1,
    versionHash: 'w8D4JrHFhBE=',
    history: [{ state: 'Completed', version: desired.version, image: desired.image, verified: false, startedTime: '2024-01-20T10:00:00Z', completionTime: '2024-01-20T10:40:00Z' }],
    conditions: [
      { type: 'Available', status: 'True', lastTransitionTime: '2024-01-20T10:40:00Z', message: 'Done applying 4.16.3' },
      { type: 'RetrievedUpdates', status: 'False', lastTransitionTime: '2024-01-20T10:00:00Z', reason: 'NoChannel', message: 'The update channel has not been configured.' },
    ],
    capabilities: { enabledCapabilities: ['Console'], knownCapabilities: ['Console'] },
  };
  const written = (await custom.replaceClusterCustomObjectStatus({ ...CV, name: 'version', body: { ...cv, status } })) as Record<string, any>;
  assert.ok('availableUpdates' in written.status);
  assert.equal(written.status.availableUpdates, null);
  const read = JSON.parse(await api.kubectlOk(['get', 'clusterversion', 'version', '-o', 'json']));
  assert.equal(read.status.availableUpdates, null);
  assert.equal(read.status.desired.version, '4.16.3');

  // versionHash is required and not nullable: its null is pruned, then it is missing.
  const r = await refusal(custom.replaceClusterCustomObjectStatus({ ...CV, name: 'version', body: { ...read, status: { ...status, versionHash: null } } }));
  assert.equal(r.code, 422);
  assert.deepEqual(r.causes.map((c) => [c.reason, c.field, c.message]), [['FieldValueRequired', 'status.versionHash', 'Required value']]);

  // conditions is a list-type map keyed by type: two Available conditions are one too many.
  const twice = { ...status, conditions: [...status.conditions, { ...status.conditions[0], status: 'False' }] };
  const d = await refusal(custom.replaceClusterCustomObjectStatus({ ...CV, name: 'version', body: { ...read, status: twice } }));
  assert.equal(d.code, 422);
  assert.deepEqual(d.causes.map((c) => [c.reason, c.field, c.message]), [['FieldValueDuplicate', 'status.conditions[2]', 'Duplicate value: {"type":"Available"}']]);
});

test('a CRD that is not structural is refused with kube-apiserver field errors', async () => {
  // The example of a non-structural schema in the Kubernetes documentation, trimmed.
  const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: foos, kind: Foo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          foo: {pattern: abc}
          bar:
            type: integer
            x-kubernetes-int-or-string: true
        anyOf:
        - properties:
            bar: {minimum: 42}
            baz: {type: string}
          required: [bar]
`;
  const r = await api.kubectl(['apply', '-f', '-'], { input: crd });
  assert.equal(r.code, 1);
  const path = 'spec.versions[0].schema.openAPIV3Schema';
  for (const line of [
    `${path}.properties[foo].type: Required value: must not be empty for specified object fields`,
    `${path}.properties[bar].type: Invalid value: "integer": must be empty if x-kubernetes-int-or-string is true`,
    `${path}.anyOf[0].properties[baz].type: Forbidden: must be empty to be structural`,
    `${path}.properties[baz]: Required value: because it is defined in ${path}.anyOf[0].properties[baz]`,
  ]) assert.ok(r.stderr.includes(line), `${line}\nin:\n${r.stderr}`);
});
