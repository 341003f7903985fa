// Real OpenShift objects (written by hand from OpenShift's documentation and `oc get -o yaml`
// of live clusters) go into the embedded API server through the real kubectl unchanged, status
// included, and print with OpenShift's columns.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { repositoryRoot } from '../../src/cli/release.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;

const kubectl = (args: string[], input?: string): Promise<string> => api.kubectlOk(args, input);

/** Creates each live object (server-set metadata dropped) and then writes its status. */
async function load(file: string, keep: (o: any) => boolean = () => true): Promise<void> {
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const o = doc.toJS();
    if (!o || !keep(o)) continue;
    const { status, metadata } = o;
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, generation: _g, managedFields: _mf, ...meta } = metadata;
    await kubectl(['create', '-f', '-'], stringify({ ...o, metadata: meta, status: undefined }));
    if (status) await kubectl(['patch', `${o.kind.toLowerCase()}/${meta.name}`, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  }
}

before(async () => {
  api = await startTestApiServer();
  const dir = join(repositoryRoot, 'release-payload', 'manifests');
  const crds = readdirSync(dir).filter((f) => f.endsWith('.crd.yaml')).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n---\n');
  await kubectl(['apply', '-f', '-'], crds);
  await kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=20s']);
});
after(async () => api.stop());

test('an OpenShift 4.14 ClusterVersion and live ClusterOperators print as on OpenShift', async () => {
  await load(join(repositoryRoot, 'test/cvo/fixtures/clusterversion-4.14.yaml'));
  await load(join(repositoryRoot, 'test/cvo/fixtures/clusteroperators.yaml'), (o) => Boolean(o.status?.conditions));
  const cv = await kubectl(['get', 'clusterversion']);
  assert.match(cv, /^NAME\s+VERSION\s+AVAILABLE\s+PROGRESSING\s+SINCE\s+STATUS\n/);
  assert.match(cv, /^version\s+4\.14\.\d+\s+True\s+False\s+\S+\s+Cluster version is 4\.14\.\d+$/m);
  const co = await kubectl(['get', 'co']);
  assert.match(co, /^NAME\s+VERSION\s+AVAILABLE\s+PROGRESSING\s+DEGRADED\s+SINCE\n/);
  assert.match(co, /^dns\s+\S+\s+True\s+False\s+False\s+\S+/m);
  const full = JSON.parse(await kubectl(['get', 'clusterversion', 'version', '-o', 'json']));
  const original = parseAllDocuments(readFileSync(join(repositoryRoot, 'test/cvo/fixtures/clusterversion-4.14.yaml'), 'utf8'))[0].toJS();
  assert.deepEqual(full.spec, original.spec, 'the spec is kept unchanged');
  assert.deepEqual(full.status.history, original.status.history, 'the status history is kept unchanged');
});

test('OpenShift MachineConfigs and MachineConfigPools print as on OpenShift', async () => {
  await load(join(repositoryRoot, 'test/mco/fixtures/openshift-machineconfigs.yaml'));
  await load(join(repositoryRoot, 'test/mco/fixtures/openshift-machineconfigpools.yaml'));
  const mc = await kubectl(['get', 'mc']);
  assert.match(mc, /^NAME\s+GENERATEDBYCONTROLLER\s+IGNITIONVERSION\s+AGE\n/);
  assert.match(mc, /^99-worker-chrony\s+3\.2\.0\s+\S+$/m);
  assert.match(mc, /^rendered-worker-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d\s+\S+\s+3\.\d\.0\s+\S+$/m);
  const mcp = await kubectl(['get', 'mcp']);
  assert.match(mcp, /^NAME\s+CONFIG\s+UPDATED\s+UPDATING\s+DEGRADED\s+MACHINECOUNT\s+READYMACHINECOUNT\s+UPDATEDMACHINECOUNT\s+DEGRADEDMACHINECOUNT\s+AGE\n/);
  assert.match(mcp, /^worker\s+rendered-worker-\S+\s+(True|False)\s+(True|False)\s+(True|False)\s+\d+\s+\d+\s+\d+\s+\d+\s+\S+$/m);
});
