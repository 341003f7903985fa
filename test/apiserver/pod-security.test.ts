// Pod Security admission as kube-apiserver's PodSecurity plugin: a namespace's enforce label
// refuses pods that violate its level (the real kubectl shows kube's message), its warn label
// (or enforce, when there is no warn) warns about pods and workloads' pod templates, pod updates
// are looked at only when their images or containers change, labels that cannot be read are
// refused, and a stricter level names the pods already there that it would refuse.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { namespacePolicy, podSecurityViolations } from '../../src/apiserver/admission/pod-security.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
const namespace = async (name: string, labels: Record<string, string>) =>
  assert.equal((await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } })).status, 201);
before(async () => {
  api = await startTestApiServer();
  await namespace('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  await namespace('base', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted' });
});
after(async () => {
  await api.stop();
});

const RESTRICTED_OK = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'app', image: 'app:1', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
};

test('restricted: kubectl run is refused with kube\'s message; a compliant pod is admitted', async () => {
  const run = await api.kubectl(['run', 'web', '-n', 'locked', '--image=bosun.local/echo']);
  assert.notEqual(run.code, 0);
  assert.equal(run.stderr.trim(), 'Error from server (Forbidden): pods "web" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
  const ok = await api.request('POST', '/api/v1/namespaces/locked/pods', { body: { metadata: { name: 'good' }, spec: RESTRICTED_OK } });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.headers.warning, undefined);
});

test('a workload whose template would violate the level is created with kubectl\'s warning', async () => {
  const created = await api.kubectl(['create', 'deployment', 'web', '-n', 'locked', '--image=bosun.local/echo']);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /^Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "echo" must set securityContext\.allowPrivilegeEscalation=false\), unrestricted capabilities/m);
  const cron = await api.kubectl(['create', 'cronjob', 'nightly', '-n', 'locked', '--image=bosun.local/echo', '--schedule=0 2 * * *']);
  assert.equal(cron.code, 0, cron.stderr);
  assert.match(cron.stderr, /Warning: would violate PodSecurity "restricted:latest"/, 'a CronJob\'s job template too');
});

test('baseline enforced with restricted warnings: what baseline forbids is refused, the rest warned about', async () => {
  const pod = (name: string, spec: object) => api.request('POST', '/api/v1/namespaces/base/pods', { body: { metadata: { name }, spec: { containers: [{ name: 'a', image: 'i' }], ...spec } } });
  const cases: [object, string][] = [
    [{ hostNetwork: true, hostPID: true }, 'host namespaces (hostNetwork=true, hostPID=true)'],
    [{ containers: [{ name: 'a', image: 'i', securityContext: { privileged: true } }, { name: 'b', image: 'i', securityContext: { privileged: true } }] }, 'privileged (containers "a", "b" must not set securityContext.privileged=true)'],
    [{ volumes: [{ name: 'root', hostPath: { path: '/' } }] }, 'hostPath volumes (volume "root")'],
    [{ containers: [{ name: 'a', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81, hostPort: 8081 }] }] }, 'hostPort (container "a" uses hostPorts 8080, 8081)'],
    [{ containers: [{ name: 'a', image: 'i', securityContext: { capabilities: { add: ['NET_ADMIN', 'CHOWN', 'SYS_ADMIN'] } } }] }, 'non-default capabilities (container "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)'],
    [{ securityContext: { seccompProfile: { type: 'Unconfined' } } }, 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    [{ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.ipv4.tcp_syncookies', value: '1' }] } }, 'forbidden sysctls (kernel.msgmax)'],
  ];
  for (const [spec, violation] of cases) {
    const r = await pod('bad', spec);
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json.message, `pods "bad" is forbidden: violates PodSecurity "baseline:latest": ${violation}`);
  }
  const warned = await pod('plain', {});
  assert.equal(warned.status, 201, warned.text);
  assert.match(String(warned.headers.warning), /^299 - "would violate PodSecurity \\"restricted:latest\\": allowPrivilegeEscalation != false/);
});

test('labels that cannot be read are refused on the namespace', async () => {
  const r = await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'typo', labels: { 'pod-security.kubernetes.io/enforce': 'restrcited', 'pod-security.kubernetes.io/warn-version': 'v2' } } } });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.message, 'Namespace "typo" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "restrcited": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "v2": must be "latest" or "v1.x"');
  const label = await api.kubectl(['label', 'namespace', 'base', 'pod-security.kubernetes.io/warn=strict', '--overwrite']);
  assert.notEqual(label.code, 0);
  assert.match(label.stderr, /metadata\.labels\[pod-security\.kubernetes\.io\/warn\]: Invalid value: "strict": must be one of privileged, baseline, restricted/);
});

test('a pod update is looked at only when its images or containers change', async () => {
  await namespace('later', {});
  const created = await api.request('POST', '/api/v1/namespaces/later/pods', { body: { metadata: { name: 'old' }, spec: { containers: [{ name: 'a', image: 'i:1' }] } } });
  assert.equal(created.status, 201);
  assert.equal((await api.request('POST', '/api/v1/namespaces/later/pods', { body: { metadata: { name: 'another' }, spec: { containers: [{ name: 'a', image: 'i:1' }] } } })).status, 201);
  assert.equal((await api.request('POST', '/api/v1/namespaces/later/pods', { body: { metadata: { name: 'rooted' }, spec: { ...RESTRICTED_OK, securityContext: { ...RESTRICTED_OK.securityContext, runAsUser: 0 } } } })).status, 201);
  // A stricter level says which pods already there it would refuse, as kubectl prints it.
  const labelled = await api.kubectl(['label', 'namespace', 'later', 'pod-security.kubernetes.io/enforce=restricted']);
  assert.equal(labelled.code, 0, labelled.stderr);
  assert.deepEqual(labelled.stderr.trim().split('\n'), [
    'Warning: existing pods in namespace "later" violate the new PodSecurity enforce level "restricted:latest"',
    'Warning: another (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    'Warning: rooted: runAsUser=0',
  ]);
  const relabel = await api.request('PATCH', '/api/v1/namespaces/later/pods/old', { contentType: 'application/merge-patch+json', body: { metadata: { labels: { tier: 'x' } } } });
  assert.equal(relabel.status, 200, 'a label change is not looked at');
  const image = await api.request('PATCH', '/api/v1/namespaces/later/pods/old', { contentType: 'application/strategic-merge-patch+json', body: { spec: { containers: [{ name: 'a', image: 'i:2' }] } } });
  assert.equal(image.status, 403, image.text);
  assert.match(image.json.message, /^pods "old" is forbidden: violates PodSecurity "restricted:latest"/);
});

test('the checks\' messages: pod and containers, plurals, restricted overriding baseline', () => {
  const meta = { name: 'p' };
  assert.deepEqual(podSecurityViolations('privileged', meta, { containers: [{ name: 'a', securityContext: { privileged: true } }] }), []);
  assert.deepEqual(podSecurityViolations('restricted', meta, {
    securityContext: { runAsNonRoot: false, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [{ name: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'NET_RAW'] }, runAsNonRoot: false } }],
    volumes: [{ name: 'data', nfs: { server: 's', path: '/' } }, { name: 'cfg', configMap: { name: 'c' } }],
  }), [
    'unrestricted capabilities (container "a" must not include "NET_RAW" in securityContext.capabilities.add)',
    'restricted volume types (volume "data" uses restricted volume type "nfs")',
    'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)',
    'runAsUser=0 (pod must not set runAsUser=0)',
  ]);
  assert.deepEqual(namespacePolicy({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.29' }), { enforce: 'baseline', enforceVersion: 'v1.29', warn: 'baseline', warnVersion: 'v1.29' });
  assert.deepEqual(namespacePolicy({ 'pod-security.kubernetes.io/warn': 'bogus' }), { enforce: 'privileged', enforceVersion: 'latest', warn: 'privileged', warnVersion: 'latest' }, 'warn fails open');
  assert.equal(namespacePolicy({ 'pod-security.kubernetes.io/enforce': 'restrcited' }).enforce, 'restricted', 'enforce fails closed');
});
