// Where the cluster learns the console's address: ClusterOperator console Available=False,
// NoLoadBalancer, until the console's LoadBalancer Service has an address; then ConfigMap
// openshift-config-managed/console-public holds consoleURL and the operator is Available with
// the release's version (what the CVO waits for).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Manager, loadKubeConfig } from '../../src/kube/index.js';
import { resources } from '../../src/kube/resources.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { consoleURL, publishController } from '../../src/console/publish.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';

test('consoleURL: the load balancer address and the https port (443 left out)', () => {
  const svc = (ingress: object[], port: number) => ({ metadata: { name: 'console' }, spec: { ports: [{ name: 'https', port }] }, status: { loadBalancer: { ingress } } });
  assert.equal(consoleURL(svc([{ ip: '127.0.200.2' }], 9443)), 'https://127.0.200.2:9443');
  assert.equal(consoleURL(svc([{ hostname: 'console.example.com' }], 443)), 'https://console.example.com');
  assert.equal(consoleURL(svc([], 9443)), undefined);
  assert.equal(consoleURL(undefined), undefined);
});

test('ClusterOperator console and console-public follow the Service', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const manager = new Manager({ name: 'console', kubeconfig: loadKubeConfig(api.kubeconfigPath), logLevel: 'warn' });
  const stop = new AbortController();
  try {
    await createReleaseCrds(manager.client, `${repositoryRoot}release-payload`);
    await api.kubectlOk(['create', 'namespace', 'openshift-console']);
    await api.kubectlOk(['create', 'namespace', 'openshift-config-managed']);
    await api.kubectlOk(['-n', 'openshift-console', 'create', 'service', 'loadbalancer', 'console', '--tcp=9443:8443']);
    await api.kubectlOk(['-n', 'openshift-console', 'patch', 'service', 'console', '--type=json', '-p', '[{"op":"replace","path":"/spec/ports/0/name","value":"https"}]']);
    manager.add(publishController(manager, { service: { namespace: 'openshift-console', name: 'console' }, version: '1.0.0' }));
    const running = manager.start(stop.signal);
    const waiting = await eventually('console NoLoadBalancer', async () => {
      const co = await manager.client.read(resources.clusterOperators, 'console');
      const available = co?.status?.conditions?.find((c) => c.type === 'Available');
      return available?.reason === 'NoLoadBalancer' ? co : undefined;
    });
    assert.match(waiting.status?.conditions?.find((c) => c.type === 'Available')?.message ?? '', /waiting for the load balancer of Service openshift-console\/console/);
    assert.equal(waiting.status?.versions, undefined);
    assert.equal(await manager.client.read(resources.configMaps, 'console-public', 'openshift-config-managed'), undefined);

    await manager.client.mergePatch(resources.services, 'console', 'openshift-console', { status: { loadBalancer: { ingress: [{ ip: '127.0.200.7' }] } } }, 'status');
    const published = await eventually('console-public', () => manager.client.read(resources.configMaps, 'console-public', 'openshift-config-managed'));
    assert.deepEqual(published.data, { consoleURL: 'https://127.0.200.7:9443' });
    const co = await eventually('console Available', async () => {
      const o = await manager.client.read(resources.clusterOperators, 'console');
      return o?.status?.conditions?.find((c) => c.type === 'Available')?.status === 'True' ? o : undefined;
    });
    assert.equal(co.status?.conditions?.find((c) => c.type === 'Available')?.message, 'the console is served at https://127.0.200.7:9443');
    assert.deepEqual(co.status?.versions, [{ name: 'operator', version: '1.0.0' }]);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await api.stop();
  }
});
