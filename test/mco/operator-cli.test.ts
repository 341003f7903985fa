// `bosun machine-config-operator` as a process: on the component manager it creates the pools,
// serves metrics and health (ready once its informers synced), logs at --log-level, holds the Lease
// openshift-machine-config-operator/machine-config, and releases it on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repositoryRoot } from '../../src/cli/release.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { freePort } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';
import { getJson } from './controller-fixtures.js';
import { fetchWhen, startComponent } from './component-process.js';
import { scrape, scrapeWhen, withDelegatedAuth } from '../helpers/metrics.js';

test('bosun machine-config-operator creates the pools, serves metrics and health, and holds then releases its Lease', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const manifests = join(repositoryRoot, 'release-payload', 'manifests');
  for (const file of readdirSync(manifests).filter((f) => f.endsWith('.crd.yaml')).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(manifests, file), 'utf8'))) {
      const r = await api.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: doc.toJS() });
      assert.equal(r.status, 201, `${file}: ${r.text}`);
    }
  }
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const lease = '/apis/coordination.k8s.io/v1/namespaces/openshift-machine-config-operator/leases/machine-config';
  const component = startComponent([
    'machine-config-operator', '--kubeconfig', api.kubeconfigPath, '--release-version', '1.0.0',
    '--metrics-listen', `127.0.0.1:${metricsPort}`, '--health-listen', `127.0.0.1:${healthPort}`,
    '--leader-elect', '--lease-duration', '4', '--renew-deadline', '3', '--retry-period', '0.5', '--log-level', 'warn',
  ]);
  try {
    assert.equal(await fetchWhen(`127.0.0.1:${healthPort}`, '/livez'), 'ok');
    assert.match(await fetchWhen(`127.0.0.1:${healthPort}`, '/readyz?verbose', 200, 30_000), /\[\+\]informer-sync ok\n\[\+\]shutdown ok/);
    const pools = await eventually('the operator to create the pools', async () => {
      const r = await api.request('GET', '/apis/machineconfiguration.openshift.io/v1/machineconfigpools');
      const names = (r.json?.items ?? []).map((p: { metadata: { name: string } }) => p.metadata.name).sort();
      return names.length === 2 && names;
    });
    assert.deepEqual(pools, ['master', 'worker']);
    // The sync that created the pools may still be writing the rest when they appear.
    await eventually('a successful reconcile in the metrics', async () => /controller_runtime_reconcile_total\{controller="machine-config-operator",result="success"\} [1-9]/.test(await scrapeWhen(`127.0.0.1:${metricsPort}`, api.token)));
    assert.equal((await scrape(`127.0.0.1:${metricsPort}`)).status, 401, 'no token, no metrics');
    assert.ok((await getJson(api, lease)).spec.holderIdentity, 'the Lease is held');
    // No ControllerConfig before the release's images are known: one without them would render
    // configs that the release's own replace, rolling every node that booted from the first.
    const controllerConfigs = '/apis/machineconfiguration.openshift.io/v1/controllerconfigs';
    assert.deepEqual((await getJson(api, controllerConfigs)).items, []);
    await api.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openshift-machine-config-operator' } } });
    await api.request('POST', '/api/v1/namespaces/openshift-machine-config-operator/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'machine-config-operator-images', namespace: 'openshift-machine-config-operator' }, data: { 'images.json': JSON.stringify({ releaseVersion: '1.0.0', baseOSContainerImage: 'bosun.local/rhel-coreos:1.0.0' }) } } });
    const cc = await eventually('the ControllerConfig, once the images are there', async () => (await getJson(api, controllerConfigs)).items[0]);
    assert.equal(cc.spec.images.releaseVersion, '1.0.0');
    assert.equal(await component.stop(), 0, component.output());
    assert.doesNotMatch(component.output(), /"level":30/, '--log-level warn holds back info lines, module loggers included');
    assert.equal((await getJson(api, lease)).spec.holderIdentity, '', 'a clean stop releases the Lease');
  } finally {
    component.child.kill('SIGKILL');
    stopAuth();
    await api.stop();
  }
});

test('bosun machine-config-operator refuses lease timings that would let two leaders act', async () => {
  const component = startComponent(['machine-config-operator', '--release-version', '1.0.0', '--lease-duration', '10', '--renew-deadline', '15']);
  const code = await new Promise<number | null>((resolve) => component.child.on('close', resolve));
  assert.equal(code, 1);
  assert.match(component.output(), /error: --renew-deadline must be shorter than --lease-duration/);
});
