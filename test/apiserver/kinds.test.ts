// The registry of per-kind strategies: every built-in type found by group/resource and by an
// object's apiVersion/kind, and a strategy's behaviour reaching the server (the field selectors
// kube offers per kind, their defaults and where they read, through real list requests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STRATEGIES, printerFor, strategyFor, strategyOf } from '../../src/apiserver/kinds/index.js';
import { BUILTIN_TYPES } from '../../src/apiserver/registry/registry.js';
import { createCertificateRequest } from '../../src/common/pki.js';
import { startTestApiServer } from '../helpers/apiserver.js';

test('every built-in type has its strategy, found by group/resource and by apiVersion/kind', () => {
  // One type per strategy, and one more per version a strategy converts to (HorizontalPodAutoscalers at autoscaling/v1).
  assert.equal(BUILTIN_TYPES.length, STRATEGIES.reduce((n, s) => n + 1 + Object.keys(s.conversions ?? {}).length, 0));
  for (const type of BUILTIN_TYPES) {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    const strategy = strategyFor(type);
    assert.ok(strategy?.type === type || strategy?.conversions?.[type.version], `${apiVersion} ${type.resource}: its own strategy, or one that converts to its version`);
    assert.equal(strategyOf({ apiVersion, kind: type.kind }), strategy, `${apiVersion} ${type.kind}`);
  }
  const cases: Array<[Parameters<typeof strategyFor>[0], string | undefined]> = [
    [{ group: '', resource: 'events', builtin: true }, 'v1/Event'],
    [{ group: 'events.k8s.io', resource: 'events', builtin: true }, 'events.k8s.io/Event'],
    [{ group: 'example.com', resource: 'events', builtin: false }, undefined],
    [{ group: '', resource: 'widgets', builtin: true }, undefined],
  ];
  for (const [type, want] of cases) {
    const s = strategyFor(type);
    assert.equal(s ? `${s.type.group || 'v1'}/${s.type.kind}` : undefined, want, JSON.stringify(type));
  }
  assert.equal(printerFor('pods')?.columns[1].name, 'Ready');
  assert.equal(printerFor('widgets'), undefined);
});

test('field selectors read a Pod\'s unset spec.hostNetwork and a Node\'s unset spec.unschedulable as false', async () => {
  const api = await startTestApiServer();
  try {
    for (const [path, body] of [
      ['/api/v1/nodes', { metadata: { name: 'plain' } }],
      ['/api/v1/nodes', { metadata: { name: 'cordoned' }, spec: { unschedulable: true } }],
      ['/api/v1/namespaces/default/pods', { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'i' }] } }],
      ['/api/v1/namespaces/default/pods', { metadata: { name: 'host' }, spec: { hostNetwork: true, containers: [{ name: 'c', image: 'i' }] } }],
    ] as const) assert.equal((await api.request('POST', path, { body })).status, 201);
    assert.equal(await api.kubectlOk(['get', 'nodes', '--field-selector', 'spec.unschedulable=false', '-o', 'name']), 'node/plain\n');
    assert.equal(await api.kubectlOk(['get', 'pods', '--field-selector', 'spec.hostNetwork=false', '-o', 'name']), 'pod/plain\n');
    assert.equal(await api.kubectlOk(['get', 'pods', '--field-selector', 'spec.hostNetwork=true', '-o', 'name']), 'pod/host\n');
  } finally {
    await api.stop();
  }
});

test('field selectors kube-apiserver offers on Services, ReplicaSets, Jobs, CSRs and Events, read where kube reads them', async () => {
  const api = await startTestApiServer();
  try {
    const ns = '/api/v1/namespaces/default';
    const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    const csr = async (name: string, signerName: string, usages: string[]) => ({
      metadata: { name },
      spec: { signerName, usages, request: Buffer.from((await createCertificateRequest({ commonName: 'alice', organizations: ['devs'] })).requestPem).toString('base64') },
    });
    for (const [path, body] of [
      [`${ns}/services`, { metadata: { name: 'cluster' }, spec: { ports: [{ port: 80 }] } }],
      [`${ns}/services`, { metadata: { name: 'nodeport' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } }],
      ['/apis/apps/v1/namespaces/default/replicasets', { metadata: { name: 'rs' }, spec: { replicas: 2, selector: { matchLabels: { app: 'a' } }, template } }],
      ['/apis/batch/v1/namespaces/default/jobs', { metadata: { name: 'job' }, spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } }],
      [`${ns}/events`, { metadata: { name: 'from-source' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R', message: 'm', source: { component: 'kubelet' } }],
      [`${ns}/events`, { metadata: { name: 'from-controller' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R', message: 'm', reportingComponent: 'my-controller' }],
    ] as const) {
      const created = await api.request('POST', path, { body });
      assert.equal(created.status, 201, created.text);
    }
    const clusterIP = (await api.request('GET', `${ns}/services/cluster`)).json.spec.clusterIP;
    const names = (args: string[]) => api.kubectlOk(['get', ...args, '-o', 'name']);
    assert.equal(await names(['services', '--field-selector', 'spec.type=NodePort']), 'service/nodeport\n');
    assert.equal(await names(['services', '--field-selector', `spec.clusterIP=${clusterIP}`]), 'service/cluster\n');
    // No controller runs here: the ReplicaSet's status.replicas is unset, read as 0; the Job has not succeeded.
    assert.equal(await names(['replicasets', '--field-selector', 'status.replicas=0']), 'replicaset.apps/rs\n');
    assert.equal(await names(['jobs', '--field-selector', 'status.successful=0']), 'job.batch/job\n');
    const status = await api.request('PUT', '/apis/batch/v1/namespaces/default/jobs/job/status', {
      body: { ...(await api.request('GET', '/apis/batch/v1/namespaces/default/jobs/job')).json, status: { succeeded: 1 } },
    });
    assert.equal(status.status, 200, status.text);
    assert.equal(await names(['jobs', '--field-selector', 'status.successful=1']), 'job.batch/job\n', 'status.successful is status.succeeded');
    assert.equal(await names(['events', '--field-selector', 'source=kubelet']), 'event/from-source\n');
    assert.equal(await names(['events', '--field-selector', 'source=my-controller']), 'event/from-controller\n', 'source falls back to the reporting controller');
    for (const [name, signer, usages] of [['client', 'kubernetes.io/kube-apiserver-client', ['client auth']], ['custom', 'example.com/custom', ['digital signature']]] as const) {
      const created = await api.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { body: await csr(name, signer, [...usages]) });
      assert.equal(created.status, 201, created.text);
    }
    assert.equal(await names(['csr', '--field-selector', 'spec.signerName=example.com/custom']), 'certificatesigningrequest.certificates.k8s.io/custom\n');
    const refused = await api.kubectl(['get', 'configmaps', '--field-selector', 'data.x=y']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /field label not supported: data\.x/);
  } finally {
    await api.stop();
  }
});
