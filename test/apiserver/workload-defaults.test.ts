// kube's defaults for the workload kinds where a manifest carries a field without a value — the
// `strategy: {}` `kubectl create deployment` sends, an `updateStrategy: {}`, a `replicas: null` —
// and for Jobs as kube-apiserver 1.33 writes them (completion mode, suspend, pod replacement
// policy, manual selector, a work queue left without a completion count), their pod templates (the
// PodSpec defaults, not a pod's own; a template stored before templates got them kept as it is)
// and Services (the single IPv4 family, the traffic and affinity settings), checked with the real
// kubectl where it reads them (describe, rollout status, get's COMPLETIONS column).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { openSqliteStorage } from '../../src/apiserver/storage/sqlite.js';
import type { Unstructured } from '../../src/api/index.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api?.stop();
});

const template = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
const apply = (object: object) => api.kubectlOk(['apply', '-f', '-'], JSON.stringify(object));
const spec = async (resource: string, name: string) => JSON.parse(await api.kubectlOk(['get', resource, name, '-o', 'json'])).spec;

test('kubectl create deployment (strategy: {}): a rolling update of 25% and 25%, as describe shows', async () => {
  await api.kubectlOk(['create', 'deployment', 'web', '--image=nginx']);
  const s = await spec('deployment', 'web');
  assert.deepEqual(s.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  assert.deepEqual([s.replicas, s.revisionHistoryLimit, s.progressDeadlineSeconds], [1, 10, 600]);
  const described = await api.kubectlOk(['describe', 'deployment', 'web']);
  assert.match(described, /^StrategyType:\s+RollingUpdate$/m);
  assert.match(described, /^RollingUpdateStrategy:\s+25% max unavailable, 25% max surge$/m);
  // What a manifest says stays: a Recreate gets no rolling parameters, a partial rolling update keeps its own.
  await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'recreate' }, spec: { replicas: null, selector: { matchLabels: { app: 'x' } }, strategy: { type: 'Recreate' }, template } });
  const recreate = await spec('deployment', 'recreate');
  assert.deepEqual(recreate.strategy, { type: 'Recreate' });
  assert.equal(recreate.replicas, 1, 'replicas: null is unset');
  await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'surge' }, spec: { selector: { matchLabels: { app: 'x' } }, strategy: { rollingUpdate: { maxSurge: 2 } }, template } });
  assert.deepEqual((await spec('deployment', 'surge')).strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: '25%' } });
});

test('a DaemonSet and a StatefulSet with updateStrategy: {} roll out by RollingUpdate, which kubectl rollout status needs', async () => {
  await apply({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'ds' }, spec: { updateStrategy: {}, selector: { matchLabels: { app: 'x' } }, template } });
  assert.deepEqual((await spec('daemonset', 'ds')).updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  await apply({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'sts' }, spec: { serviceName: 'sts', updateStrategy: {}, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' }, selector: { matchLabels: { app: 'x' } }, template } });
  const sts = await spec('statefulset', 'sts');
  assert.deepEqual(sts.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  assert.deepEqual(sts.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Delete', whenScaled: 'Retain' });
  assert.equal(sts.podManagementPolicy, 'OrderedReady');
  // kubectl refuses a rollout status for any other strategy type ("only available for RollingUpdate").
  for (const what of ['daemonset/ds', 'statefulset/sts']) {
    const r = await api.kubectl(['rollout', 'status', what, '--watch=false']);
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    assert.match(r.stdout, /Waiting for/, what);
  }
  // OnDelete stays OnDelete, without rolling parameters.
  await apply({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'manual' }, spec: { serviceName: 'manual', updateStrategy: { type: 'OnDelete' }, selector: { matchLabels: { app: 'x' } }, template } });
  assert.deepEqual((await spec('statefulset', 'manual')).updateStrategy, { type: 'OnDelete' });
});

test('Jobs as kube-apiserver 1.33 writes them; a work queue (parallelism, no completions) keeps no completion count', async () => {
  await api.kubectlOk(['create', 'job', 'once', '--image=i']);
  const job = JSON.parse(await api.kubectlOk(['get', 'job', 'once', '-o', 'json']));
  const { completions, parallelism, backoffLimit, completionMode, suspend, podReplacementPolicy, manualSelector } = job.spec;
  assert.deepEqual({ completions, parallelism, backoffLimit, completionMode, suspend, podReplacementPolicy, manualSelector }, {
    completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed', manualSelector: false,
  });
  // The Job carries its pods' labels, the selector's among them.
  assert.equal(job.metadata.labels['batch.kubernetes.io/job-name'], 'once');
  assert.equal(job.metadata.labels['batch.kubernetes.io/controller-uid'], job.metadata.uid);

  const podSpec = { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] };
  await apply({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'queue' }, spec: { parallelism: 3, template: { spec: podSpec } } });
  const queue = await spec('job', 'queue');
  assert.equal(queue.completions, undefined, 'a work queue has no completion count');
  assert.equal(queue.parallelism, 3);
  assert.match(await api.kubectlOk(['get', 'job', 'queue', '--no-headers']), /^queue\s+Running\s+0\/1 of 3\s/);

  // Under a pod failure policy a replacement waits for the pod to be Failed; a pattern's status defaults to True.
  await apply({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'policy' },
    spec: { podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] }, template: { spec: podSpec } },
  });
  const policy = await spec('job', 'policy');
  assert.equal(policy.podReplacementPolicy, 'Failed');
  assert.deepEqual(policy.podFailurePolicy.rules[0].onPodConditions, [{ type: 'DisruptionTarget', status: 'True' }]);
  // A limit per index leaves the Job as a whole unlimited.
  await apply({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'indexed' }, spec: { completions: 2, completionMode: 'Indexed', backoffLimitPerIndex: 1, template: { spec: podSpec } } });
  assert.equal((await spec('job', 'indexed')).backoffLimit, 2147483647);
});

test('a ReplicaSet with replicas: null has one; a CronJob with concurrencyPolicy "" allows concurrent runs', async () => {
  const rs = await api.request('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: { metadata: { name: 'rs' }, spec: { replicas: null, selector: { matchLabels: { app: 'x' } }, template } } });
  assert.equal(rs.status, 201, rs.text);
  assert.equal(rs.json.spec.replicas, 1);
  const cj = await api.request('POST', '/apis/batch/v1/namespaces/default/cronjobs', {
    body: { metadata: { name: 'cj' }, spec: { schedule: '*/5 * * * *', concurrencyPolicy: '', suspend: null, jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'i' }] } } } } } },
  });
  assert.equal(cj.status, 201, cj.text);
  assert.deepEqual([cj.json.spec.concurrencyPolicy, cj.json.spec.suspend], ['Allow', false]);
});

test('a strategy that is no object, of an unknown type, or rolling a Recreate is refused with the field named', async () => {
  const deployments = '/apis/apps/v1/namespaces/default/deployments';
  const daemonSets = '/apis/apps/v1/namespaces/default/daemonsets';
  const statefulSets = '/apis/apps/v1/namespaces/default/statefulsets';
  const selector = { matchLabels: { app: 'x' } };
  for (const [path, spec, message] of [
    [deployments, { selector, strategy: 'fast', template }, /spec\.strategy: Invalid value: "fast": must be an object/],
    [deployments, { selector, strategy: { type: 'Blue' }, template }, /spec\.strategy\.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"/],
    [deployments, { selector, strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } }, template }, /spec\.strategy\.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'/],
    [daemonSets, { selector, updateStrategy: [1], template }, /spec\.updateStrategy: Invalid value: \[1\]: must be an object/],
    [statefulSets, { serviceName: 's', selector, updateStrategy: { type: 'RollingUpdate', rollingUpdate: 3 }, template }, /spec\.updateStrategy\.rollingUpdate: Invalid value: 3: must be an object/],
  ] as const) {
    const r = await api.request('POST', path, { body: { metadata: { name: 'bad' }, spec } });
    assert.equal(r.status, 422, `${path}: ${r.status} ${r.text}`);
    assert.equal(r.json.reason, 'Invalid');
    assert.match(r.json.message, message);
  }
  const job = await api.request('POST', '/apis/batch/v1/namespaces/default/jobs', { body: { metadata: { name: 'bad' }, spec: 7 } });
  assert.ok(job.status === 400 || job.status === 422, `${job.status} ${job.text}`);
  assert.equal(job.json.kind, 'Status');
  assert.equal((await api.request('GET', `${deployments}/bad`)).status, 404, 'nothing stored');
});

test('Services as kube-apiserver 1.33 writes them on a single-stack IPv4 cluster: family, traffic policy, affinity; an ExternalName drops them', async () => {
  await api.kubectlOk(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
  const web = await spec('service', 'web');
  assert.deepEqual([web.ipFamilyPolicy, web.ipFamilies, web.internalTrafficPolicy, web.sessionAffinity], ['SingleStack', ['IPv4'], 'Cluster', 'None']);
  assert.match(await api.kubectlOk(['describe', 'service', 'web']), /^IP Family Policy:\s+SingleStack\nIP Families:\s+IPv4$/m);
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] } });
  const lb = await spec('service', 'lb');
  assert.equal(lb.allocateLoadBalancerNodePorts, true);
  assert.deepEqual(lb.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
  // type: "" is ClusterIP; no affinity keeps no affinity settings.
  const plain = await api.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'plain' }, spec: { type: '', sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } }, ports: [{ port: 80 }] } } });
  assert.equal(plain.status, 201, plain.text);
  assert.equal(plain.json.spec.type, 'ClusterIP');
  assert.equal(plain.json.spec.sessionAffinityConfig, undefined);
  // A headless Service without a selector asks for every family the cluster has (kube's default), and keeps it when an update says nothing.
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'external-db' }, spec: { clusterIP: 'None', ports: [{ port: 5432 }] } });
  const headless = await spec('service', 'external-db');
  assert.deepEqual([headless.ipFamilyPolicy, headless.ipFamilies], ['RequireDualStack', ['IPv4']]);
  await api.kubectlOk(['replace', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'external-db', labels: { tier: 'db' } }, spec: { clusterIP: 'None', ports: [{ port: 5432 }] } }));
  assert.equal((await spec('service', 'external-db')).ipFamilyPolicy, 'RequireDualStack');
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'headless-selected' }, spec: { clusterIP: 'None', selector: { app: 'x' }, ports: [{ port: 80 }] } });
  assert.equal((await spec('service', 'headless-selected')).ipFamilyPolicy, 'SingleStack', 'with a selector, the one family');
  // Its selector dropped by an update that names no policy: it keeps the one it had (kube's initIPFamilyFields adopts the old policy).
  await api.kubectlOk(['replace', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'headless-selected' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } }));
  assert.equal((await spec('service', 'headless-selected')).ipFamilyPolicy, 'SingleStack', 'an update without a policy keeps the old one');
  // Turned into an ExternalName, it has no family, cluster IP or traffic policy left.
  await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { type: 'ExternalName', externalName: 'example.com', clusterIP: '', ports: [{ port: 80 }] } });
  const moved = await spec('service', 'web');
  assert.deepEqual([moved.ipFamilies, moved.ipFamilyPolicy, moved.internalTrafficPolicy, moved.clusterIP], [undefined, undefined, undefined, undefined]);
  // What a single-stack cluster cannot give is refused, naming the field.
  for (const [extra, message] of [
    [{ ipFamilies: ['IPv6'] }, /spec\.ipFamilies\[0\]: Invalid value: "IPv6": not configured on this cluster/],
    [{ ipFamilyPolicy: 'RequireDualStack' }, /spec\.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services/],
    [{ internalTrafficPolicy: 'Nearby' }, /spec\.internalTrafficPolicy: Unsupported value: "Nearby": supported values: "Cluster", "Local"/],
  ] as const) {
    const r = await api.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'bad' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }], ...extra } } });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, message);
  }
});

test("workloads' pod templates get the PodSpec defaults (not a pod's own); one stored before they existed is kept as it is", async () => {
  const withLimits = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1.2', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1' } } }], volumes: [{ name: 'v', configMap: { name: 'cm' } }] } };
  await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'tpl' }, spec: { selector: { matchLabels: { app: 'x' } }, template: withLimits } });
  await apply({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tpl' }, spec: { schedule: '@hourly', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i:latest' }] } } } } } });
  const expectDefaults = (podSpec: Record<string, any>, what: string, pullPolicy: string) => {
    assert.deepEqual(
      [podSpec.dnsPolicy, podSpec.schedulerName, podSpec.terminationGracePeriodSeconds, podSpec.securityContext],
      ['ClusterFirst', 'default-scheduler', 30, {}], what);
    const [c] = podSpec.containers;
    assert.deepEqual([c.imagePullPolicy, c.terminationMessagePath, c.terminationMessagePolicy], [pullPolicy, '/dev/termination-log', 'File'], what);
    // What only a Pod gets: requests from limits, enableServiceLinks.
    assert.equal(podSpec.enableServiceLinks, undefined, what);
  };
  const deployment = await spec('deployment', 'tpl');
  expectDefaults(deployment.template.spec, 'Deployment', 'IfNotPresent');
  assert.equal(deployment.template.spec.restartPolicy, 'Always');
  assert.deepEqual(deployment.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
  assert.deepEqual(deployment.template.spec.containers[0].resources, { limits: { cpu: '1' } }, 'no requests from limits in a template');
  assert.deepEqual(deployment.template.spec.volumes, [{ name: 'v', configMap: { name: 'cm', defaultMode: 420 } }]);
  const cron = await spec('cronjob', 'tpl');
  expectDefaults(cron.jobTemplate.spec.template.spec, 'CronJob', 'Always');
  assert.equal(cron.jobTemplate.spec.template.spec.restartPolicy, 'Never');

  // A Deployment and a Job as a server before templates got defaults stored them (written straight
  // into the store, the server stopped): updated now, their templates stay as they were — a Job's
  // template is immutable, and a changed template would roll a workload's pods.
  await api.kubectlOk(['create', 'job', 'old-job', '--image=i']);
  await api.kubectlOk(['create', 'deployment', 'old', '--image=i']);
  const dataDir = api.dataDir;
  await api.stop({ keepData: true });
  const storage = openSqliteStorage(join(dataDir, 'state.db'));
  const strip = (object: Unstructured & { spec?: any }) => {
    const podSpec = object.spec.template.spec;
    for (const key of ['dnsPolicy', 'restartPolicy', 'schedulerName', 'terminationGracePeriodSeconds', 'securityContext']) if (key !== 'restartPolicy' || object.kind !== 'Job') delete podSpec[key];
    for (const c of podSpec.containers) for (const key of ['imagePullPolicy', 'terminationMessagePath', 'terminationMessagePolicy']) delete c[key];
    return object;
  };
  const undefaulted: Record<string, unknown> = {};
  for (const key of ['/apps/deployments/default/old', '/batch/jobs/default/old-job']) {
    const stored = storage.get(key);
    assert.ok(stored, key);
    const object = strip(structuredClone(stored.object) as Unstructured & { spec?: any });
    undefaulted[key] = object.spec.template;
    await storage.update(key, object, { expectedRevision: stored.revision });
  }
  await storage.close();
  api = await startTestApiServer({ dataDir });
  await api.kubectlOk(['scale', 'deployment', 'old', '--replicas=3']);
  await api.kubectlOk(['label', 'deployment', 'old', 'tier=web']);
  await api.kubectlOk(['label', 'job', 'old-job', 'tier=batch']);
  const old = await spec('deployment', 'old');
  assert.equal(old.replicas, 3);
  assert.deepEqual(old.template, undefaulted['/apps/deployments/default/old'], 'the old template as it was');
  assert.deepEqual((await spec('job', 'old-job')).template, undefaulted['/batch/jobs/default/old-job']);
  // A change of its template writes it as it was sent, still without the defaults.
  await api.kubectlOk(['set', 'image', 'deployment/old', 'i=i:2']);
  const changed = await spec('deployment', 'old');
  assert.equal(changed.template.spec.containers[0].image, 'i:2');
  assert.equal(changed.template.spec.containers[0].imagePullPolicy, undefined);
});
