// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// The cloud-controller-manager runs with exactly the ClusterRole the Kubernetes documentation
// gives the CCM (../shared/design/openshift.md) plus the two grants a current CCM also needs
// (services/status patch for the balancer's address; leases for leader election) — the rules read
// from the payload's manifest (0000_26_cloud-controller-manager-operator_03_rbac_provider.yaml),
// checked there against the documented role, so the two cannot drift — as the payload's
// ServiceAccount's token: every controller does its work (node initialised, route and
// NetworkUnavailable, balancer ingress, dead node deleted) and the same credentials get 403 for
// anything outside those rules.
import { rootCredentialPath } from '../src/cloud/client.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRef } from '../src/kube/client.js';
import * as k8s from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { KubeClient, type KubeApiError, Manager, type Obj, loadKubeConfig } from '../src/kube/index.js';
import { enableAccessControl } from '../src/apiserver/auth/access-control.js';
import { addCloudControllers } from '../src/ccm-operator/ccm.js';
import { NODES, SERVICES, UNINITIALIZED_TAINT } from '../src/ccm-operator/context.js';
import { startTestApiServer } from './helpers/apiserver.js';
import { eventually } from './helpers/eventually.js';
import { isUp, startCloud, waitForInstance } from './cloud/cloud-fixture.js';
import { CCM_DOCUMENTED_RULES } from './helpers/ccm-role.js';

/** The CCM's ServiceAccount, ClusterRole and binding exactly as the payload ships them. */
const MANIFEST = fileURLToPath(new URL('../release-payload/manifests/0000_26_cloud-controller-manager-operator_03_rbac_provider.yaml', import.meta.url));
const CCM_NAMESPACE = 'openshift-cloud-controller-manager';
const docs = parseAllDocuments(readFileSync(MANIFEST, 'utf8')).map((d) => d.toJS() as Obj);

test("the payload's CCM ClusterRole is the documented role plus only services/status patch and leases", () => {
  const role = docs.find((d) => d.kind === 'ClusterRole');
  assert.ok(role, 'a ClusterRole in the manifest');
  assert.deepEqual(role.rules, [
    ...(parseYaml(CCM_DOCUMENTED_RULES) as Obj[]),
    { apiGroups: [''], resources: ['services/status'], verbs: ['patch'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  ]);
  const binding = docs.find((d) => d.kind === 'ClusterRoleBinding');
  assert.deepEqual(binding?.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
  assert.deepEqual(binding?.subjects, [{ kind: 'ServiceAccount', name: 'cloud-controller-manager', namespace: CCM_NAMESPACE }]);
});

const LEASES: ResourceRef<Obj> = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true };
const PODS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'pods', namespaced: true };
const SECRETS: ResourceRef<Obj> = { group: '', version: 'v1', resource: 'secrets', namespaced: true };

test("every CCM controller works with exactly the payload's CCM role and gets 403 outside it", { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  await enableAccessControl(api.server, api.dataDir);
  const cloud = await startCloud();
  const stop = new AbortController();
  const cluster = `rbac${randomBytes(3).toString('hex')}`;
  try {
    const admin = new KubeClient(loadKubeConfig(api.kubeconfigPath));
    await api.kubectlOk(['create', 'namespace', CCM_NAMESPACE]);
    await api.kubectlOk(['apply', '-f', MANIFEST]);
    const token = (await api.kubectlOk(['create', 'token', 'cloud-controller-manager', '-n', CCM_NAMESPACE, '--duration=1h'])).trim();
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: api.url, caData: Buffer.from(api.caPem).toString('base64') }],
      users: [{ name: 'ccm', token }],
      contexts: [{ name: 'ccm', cluster: 'c', user: 'ccm' }],
      currentContext: 'ccm',
    });

    const live = await waitForInstance(cloud.client, (await cloud.client.createInstance({ name: 'rbac-live' })).id, 'up', isUp);
    const doomed = await waitForInstance(cloud.client, (await cloud.client.createInstance({ name: 'rbac-doomed' })).id, 'up', isUp);
    for (const [i, name] of ['rbac-live', 'rbac-doomed'].entries()) {
      await admin.create(NODES, { metadata: { name }, spec: { podCIDRs: [`127.1.${i + 1}.0/24`], podCIDR: `127.1.${i + 1}.0/24`, taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] } });
      await admin.mergePatch(NODES, name, undefined, { status: { conditions: [{ type: 'Ready', status: name === 'rbac-live' ? 'True' : 'False', reason: 'Kubelet', message: '' }] } }, 'status');
    }
    await admin.create(SERVICES, { metadata: { name: 'lb', namespace: 'default' }, spec: { type: 'LoadBalancer', ports: [{ port: 18100 }] } });

    const manager = new Manager({
      name: 'cloud-controller-manager', kubeconfig: kc,
      leaderElection: { namespace: 'kube-system', name: 'cloud-controller-manager', identity: 'rbac-test', leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 500 },
    });
    await addCloudControllers(manager, { cloudProvider: 'local', cloudConfig: `url: ${cloud.service.url}\n`, cloudCredentialsFile: rootCredentialPath(cloud.dataDir), clusterName: cluster, clusterCidr: '127.1.0.0/16', periods: { nodeMonitorMs: 300, routesMs: 500 } });
    void manager.start(stop.signal);

    // leader election
    await eventually('the Lease held', async () => (await admin.read(LEASES, 'cloud-controller-manager', 'kube-system'))?.spec?.holderIdentity === 'rbac-test');
    // cloud-node
    const node = await eventually('rbac-live initialised', async () => {
      const n = await admin.get(NODES, 'rbac-live');
      return n.spec!.providerID && !(n.spec!.taints ?? []).length ? n : undefined;
    });
    assert.equal(node.spec!.providerID, `local://${live.id}`);
    // route (nodes/status patch)
    await eventually('NetworkUnavailable=False', async () =>
      (await admin.get(NODES, 'rbac-live')).status!.conditions!.some((c: Obj) => c.type === 'NetworkUnavailable' && c.status === 'False' && c.reason === 'RouteCreated'));
    // service (services patch for the finalizer, services/status patch for the address)
    const svc = await eventually('ingress', async () => {
      const s = await admin.get(SERVICES, 'lb', 'default');
      return s.status?.loadBalancer?.ingress?.length ? s : undefined;
    });
    assert.deepEqual(svc.metadata.finalizers, ['service.kubernetes.io/load-balancer-cleanup']);
    // cloud-node-lifecycle (nodes delete)
    await cloud.client.operate('terminate', doomed.id);
    await eventually('rbac-doomed deleted', async () => (await admin.read(NODES, 'rbac-doomed')) === undefined);
    // events (create) from the service and node controllers
    await eventually('events recorded', async () => {
      const reasons = (await admin.list({ group: '', version: 'v1', resource: 'events', namespaced: true }, 'default')).items.map((e: Obj) => e.reason);
      return ['Synced', 'EnsuredLoadBalancer', 'DeletingNode'].every((r) => reasons.includes(r));
    });

    // Outside the role: 403 with Kubernetes' Status.
    const ccm = new KubeClient(kc);
    const forbidden: Array<[string, () => Promise<unknown>]> = [
      ['get a service', () => ccm.get(SERVICES, 'lb', 'default')],
      ['delete a service', () => ccm.request('DELETE', '/api/v1/namespaces/default/services/lb')],
      ['list pods', () => ccm.list(PODS, 'default')],
      ['read a secret', () => ccm.get(SECRETS, 'x', 'kube-system')],
      ['delete the Lease', () => ccm.request('DELETE', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/cloud-controller-manager')],
      ['patch a pod status', () => ccm.mergePatch(PODS, 'p', 'default', { status: {} }, 'status')],
    ];
    for (const [what, call] of forbidden) {
      await assert.rejects(call(), (e: KubeApiError) => {
        assert.equal(e.code, 403, `${what}: ${e.message}`);
        assert.match(e.message, /system:serviceaccount:openshift-cloud-controller-manager:cloud-controller-manager/);
        return true;
      }, what);
    }
  } finally {
    stop.abort();
    await new Promise((r) => setTimeout(r, 300));
    await cloud.close();
    await api.stop();
  }
});
