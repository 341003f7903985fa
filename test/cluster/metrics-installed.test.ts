// Every component's metrics endpoint on an installed cluster (test: shared-addresses — machines on
// 127.0.1.N, the machine-config server's 22623/22624; run it under `flock /tmp/bosun-shared.lock`):
// each Service of the table has ready endpoints, and each endpoint answers over HTTPS with a
// certificate for `<service>.<namespace>.svc` that the service CA published in
// openshift-config-managed/service-ca verifies; 401 to an anonymous scrape, 403 to a token without
// the grant, 200 to a service account bound to a ClusterRole with `nonResourceURLs: ["/metrics"]`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.js';
import { installCluster, type InstalledCluster } from '../helpers/installed-cluster.js';
import { scrape } from '../helpers/metrics.js';
import type { Obj } from '../../src/kube/client.js';

const TABLE = [
  { namespace: 'openshift-cluster-version', service: 'cluster-version-operator', port: 9099 },
  { namespace: 'openshift-machine-config-operator', service: 'machine-config-operator', port: 9001 },
  { namespace: 'openshift-machine-config-operator', service: 'machine-config-controller', port: 9001 },
  { namespace: 'openshift-machine-config-operator', service: 'machine-config-daemon', port: 9001 },
  { namespace: 'openshift-cloud-controller-manager-operator', service: 'cluster-cloud-controller-manager-operator', port: 9258 },
  { namespace: 'openshift-cloud-controller-manager', service: 'cloud-controller-manager', port: 10258 },
  { namespace: 'openshift-cluster-api', service: 'capi-controllers', port: 8443 },
];

const METRICS_READER = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: test-metrics-reader}
rules:
- nonResourceURLs: ["/metrics"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: test-metrics-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test-metrics-reader}
subjects:
- {kind: ServiceAccount, name: scraper, namespace: default}
`;

let c: InstalledCluster;

before(async () => {
  c = await installCluster(0);
});

after(async () => {
  await c?.destroy();
});

test('each metrics Service answers 401 anonymous, 403 unprivileged, 200 to a token granted get on /metrics, with the service CA\'s certificate', { timeout: 600_000 }, async () => {
  await c.kubectl(['create', 'serviceaccount', 'scraper', '-n', 'default']);
  await c.kubectl(['create', 'serviceaccount', 'nobody', '-n', 'default']);
  const { runKubectl } = await import('../helpers/apiserver.js');
  const applied = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: METRICS_READER });
  assert.equal(applied.code, 0, applied.stderr);
  const scraper = (await c.kubectl(['create', 'token', 'scraper', '-n', 'default'])).trim();
  const nobody = (await c.kubectl(['create', 'token', 'nobody', '-n', 'default'])).trim();
  const ca = (await c.json(['get', 'configmap', 'service-ca', '-n', 'openshift-config-managed'])).data['ca-bundle.crt'] as string;
  assert.match(ca, /BEGIN CERTIFICATE/);

  for (const row of TABLE) {
    const servername = `${row.service}.${row.namespace}.svc`;
    const addresses = await eventually(`ready endpoints of ${row.namespace}/${row.service}`, async () => {
      const endpoints = await c.json(['get', 'endpoints', row.service, '-n', row.namespace]).catch(() => undefined);
      const list = ((endpoints?.subsets ?? []) as Obj[]).flatMap((s) => (s.addresses ?? []).flatMap((a: Obj) => (s.ports ?? []).filter((p: Obj) => p.name === 'metrics').map((p: Obj) => `${a.ip}:${p.port}`)));
      return list.length > 0 && list;
    }, { timeoutMs: 240_000, intervalMs: 1000 });
    for (const address of addresses) {
      const what = `${row.service} at ${address}`;
      const anonymous = await eventually(`${what} to answer`, () => scrape(address, { ca, servername }).catch(() => undefined), { timeoutMs: 120_000, intervalMs: 1000 });
      assert.equal(anonymous.status, 401, `${what}: anonymous`);
      assert.equal((await scrape(address, { ca, servername, token: nobody })).status, 403, `${what}: unprivileged`);
      const allowed = await scrape(address, { ca, servername, token: scraper });
      assert.equal(allowed.status, 200, `${what}: granted: ${allowed.text}`);
      assert.match(allowed.text, /^# HELP /m);
      console.log(`${what}: 401 anonymous, 403 unprivileged, 200 granted (${allowed.text.split('\n').length} lines)`);
    }
  }
});
