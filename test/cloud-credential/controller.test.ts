// The cloud-credential controller against the embedded API server and a real local cloud: the
// payload's CRD and CredentialsRequests (applied with kubectl, as the CVO would) become identities
// in the cloud with exactly the requested actions and Secrets in the components' namespaces whose
// credential works against the cloud; the status says so (and `kubectl get credentialsrequests`
// shows it); a missing target namespace waits; root-only or unknown actions are refused with a
// condition; a deleted or edited Secret is written again with a new credential (the old one stops
// working); deleting a request removes its identity and Secret.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CloudClient, CREDENTIAL_KEY } from '../../src/cloud/client.js';
import type { CloudError } from '../../src/cloud/errors.js';
import { addCloudCredentialController, CREDENTIALS_NAMESPACE, DEPROVISION_FINALIZER, REQUEST_ANNOTATION } from '../../src/cloud-credential/controller.js';
import { repositoryRoot } from '../../src/cli/release.js';
import type * as api from '../../src/api/index.js';
import { KubeClient, Manager, loadKubeConfig, resources as R } from '../../src/kube/index.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { startCloud, type CloudFixture } from '../cloud/cloud-fixture.js';

const MANIFESTS = join(repositoryRoot, 'release-payload/manifests');
const CRD = join(MANIFESTS, '0000_03_cloud-credential-operator_01_credentialsrequests.crd.yaml');
const CAPI_REQUEST = join(MANIFESTS, '0000_30_cluster-api_01_credentialsrequest.yaml');
const CCM_REQUEST = join(MANIFESTS, '0000_26_cloud-controller-manager-operator_05_credentialsrequest.yaml');

let apiServer: TestApiServer;
let cloud: CloudFixture;
let kube: KubeClient;
const stop = new AbortController();
let running: Promise<void>;

before(async () => {
  [apiServer, cloud] = await Promise.all([startTestApiServer(), startCloud()]);
  await apiServer.kubectlOk(['apply', '-f', CRD, '-f', join(MANIFESTS, '0000_03_cloud-credential-operator_00_namespace.yaml')]);
  await apiServer.kubectlOk(['wait', '--for=condition=Established', 'crd/credentialsrequests.cloudcredential.openshift.io', '--timeout=30s']);
  kube = new KubeClient(loadKubeConfig(apiServer.kubeconfigPath));
  const manager = new Manager({ name: 'cloud-credential-operator', kubeconfig: apiServer.kubeconfigPath, logLevel: 'warn' });
  addCloudCredentialController(manager, cloud.client);
  running = manager.start(stop.signal);
});

after(async () => {
  stop.abort();
  await running;
  await Promise.all([cloud?.close(), apiServer?.stop()]);
});

const load = (file: string) => parseAllDocuments(readFileSync(file, 'utf8'))[0].toJS() as api.CredentialsRequest;
const secretCredential = (s: api.Secret) => Buffer.from(s.data![CREDENTIAL_KEY], 'base64').toString('utf8');
const condition = (r: api.CredentialsRequest | undefined, type: string) => r?.status?.conditions?.find((c) => c.type === type);

async function provisionedSecret(namespace: string, name: string, notKey?: string): Promise<api.Secret> {
  return eventually(`Secret ${namespace}/${name}${notKey ? ' with a new key' : ''}`, async () => {
    const s = await kube.read(R.secrets, name, namespace);
    return s?.data?.[CREDENTIAL_KEY] && secretCredential(s).split('.')[0] !== notKey ? s : undefined;
  }, 60_000);
}

test("the payload's requests: identities with their actions, Secrets in the components' namespaces that work against the cloud, status provisioned", { timeout: 120_000 }, async () => {
  await apiServer.kubectlOk(['create', 'namespace', 'openshift-cloud-controller-manager']);
  await apiServer.kubectlOk(['apply', '-f', CCM_REQUEST, '-f', CAPI_REQUEST]);
  // Cluster API's namespace comes later: the request waits for it.
  const waiting = await eventually('MissingTargetNamespace', async () => {
    const r = await kube.read(R.credentialsRequests, 'openshift-cluster-api', CREDENTIALS_NAMESPACE);
    return condition(r, 'MissingTargetNamespace')?.status === 'True' ? r : undefined;
  }, 60_000);
  assert.equal(condition(waiting, 'MissingTargetNamespace')!.message, 'target namespace openshift-cluster-api does not exist');
  assert.equal(waiting.status!.provisioned, false);
  await apiServer.kubectlOk(['create', 'namespace', 'openshift-cluster-api']);

  for (const file of [CCM_REQUEST, CAPI_REQUEST]) {
    const want = load(file);
    const ref = want.spec!.secretRef;
    const secret = await provisionedSecret(ref.namespace, ref.name);
    assert.equal(secret.metadata.annotations?.[REQUEST_ANNOTATION], `${CREDENTIALS_NAMESPACE}/${want.metadata.name}`);
    assert.equal(Buffer.from(secret.data!.identity, 'base64').toString(), want.metadata.name);
    const me = await new CloudClient(cloud.service.url, secretCredential(secret)).identity();
    assert.deepEqual({ name: me.name, actions: me.actions }, { name: want.metadata.name, actions: [...want.spec!.providerSpec.actions].sort() });
    const request = await eventually('provisioned', async () => {
      const r = await kube.read(R.credentialsRequests, want.metadata.name!, CREDENTIALS_NAMESPACE);
      return r?.status?.provisioned ? r : undefined;
    }, 30_000);
    assert.deepEqual(request.status!.providerStatus, { identity: want.metadata.name, keyId: me.keyId });
    assert.ok(request.metadata.finalizers?.includes(DEPROVISION_FINALIZER));
    assert.equal(condition(request, 'CredentialsProvisionFailure')?.status, 'False');
    // Only the component's namespace holds it.
    const elsewhere = (await kube.list(R.secrets)).items.filter((s) => s.metadata.annotations?.[REQUEST_ANNOTATION] === `${CREDENTIALS_NAMESPACE}/${want.metadata.name}`);
    assert.deepEqual(elsewhere.map((s) => `${s.metadata.namespace}/${s.metadata.name}`), [`${ref.namespace}/${ref.name}`]);
  }
  // Settled: nothing more is written (a status write is an event; the same status is not written again).
  const settled = async () => (await kube.list(R.credentialsRequests, CREDENTIALS_NAMESPACE)).items.map((r) => r.metadata.resourceVersion).join();
  const versions = await settled();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal(await settled(), versions);
  const table = await apiServer.kubectlOk(['get', 'credentialsrequests', '-n', CREDENTIALS_NAMESPACE]);
  assert.match(table, /^NAME\s+PROVISIONED\s+SECRET-NAMESPACE\s+SECRET\s+AGE$/m);
  assert.match(table, /^openshift-cluster-api\s+true\s+openshift-cluster-api\s+capi-cloud-credentials\s+\S+$/m);
  assert.match(table, /^openshift-cloud-controller-manager\s+true\s+openshift-cloud-controller-manager\s+cloud-controller-manager-cloud-credentials\s+\S+$/m);
});

test('a deleted or edited Secret is written again with a new credential; the old one stops working', { timeout: 120_000 }, async () => {
  const first = await provisionedSecret('openshift-cluster-api', 'capi-cloud-credentials');
  const old = secretCredential(first);
  await kube.delete(R.secrets, 'capi-cloud-credentials', 'openshift-cluster-api');
  const second = await provisionedSecret('openshift-cluster-api', 'capi-cloud-credentials', old.split('.')[0]);
  await assert.rejects(new CloudClient(cloud.service.url, old).listInstances(), (e: CloudError) => e.status === 401);
  assert.equal((await new CloudClient(cloud.service.url, secretCredential(second)).identity()).name, 'openshift-cluster-api');

  const current = secretCredential(second);
  // The same key id with another secret: the cloud refuses it, so the controller issues a new one.
  const tampered = `${current.split('.')[0]}.tampered`;
  await kube.update(R.secrets, { ...second, data: { ...second.data, [CREDENTIAL_KEY]: Buffer.from(tampered).toString('base64') } });
  const third = await eventually('a new credential after tampering', async () => {
    const s = await kube.read(R.secrets, 'capi-cloud-credentials', 'openshift-cluster-api');
    return s && ![current, tampered].includes(secretCredential(s)) ? s : undefined;
  }, 60_000);
  assert.equal((await new CloudClient(cloud.service.url, secretCredential(third)).identity()).name, 'openshift-cluster-api');
});

test('root-only or unknown actions, and a Secret that is not the request\'s, are refused with a condition; nothing is minted', { timeout: 60_000 }, async () => {
  await apiServer.kubectlOk(['create', 'namespace', 'greedy']);
  await apiServer.kubectlOk(['-n', 'greedy', 'create', 'secret', 'generic', 'taken', '--from-literal=x=y']);
  const request = (name: string, actions: string[], secret = name): api.CredentialsRequest => ({
    apiVersion: 'cloudcredential.openshift.io/v1', kind: 'CredentialsRequest', metadata: { name, namespace: CREDENTIALS_NAMESPACE },
    spec: { secretRef: { name: secret, namespace: 'greedy' }, providerSpec: { apiVersion: 'cloudcredential.openshift.io/v1', kind: 'LocalProviderSpec', actions } },
  });
  await kube.create(R.credentialsRequests, request('minter', ['instances:describe', 'credentials:manage']));
  await kube.create(R.credentialsRequests, request('typo', ['instances:explode']));
  await kube.create(R.credentialsRequests, request('squatter', ['instances:describe'], 'taken'));
  const failure = (name: string) => eventually(`${name} refused`, async () => {
    const c = condition(await kube.read(R.credentialsRequests, name, CREDENTIALS_NAMESPACE), 'CredentialsProvisionFailure');
    return c?.status === 'True' ? c : undefined;
  }, 30_000);
  assert.equal((await failure('minter')).message, 'spec.providerSpec.actions: "credentials:manage" cannot be granted to a component');
  assert.match((await failure('typo')).message ?? '', /^spec.providerSpec.actions: unknown action "instances:explode" \(known: instances:describe, /);
  assert.equal((await failure('squatter')).reason, 'SecretConflict');
  const names = (await cloud.client.listIdentities()).map((i) => i.name);
  for (const n of ['minter', 'typo', 'squatter']) assert.ok(!names.includes(n), `${n} has no identity`);
  assert.equal((await kube.read(R.secrets, 'minter', 'greedy')), undefined);
  assert.deepEqual((await kube.get(R.secrets, 'taken', 'greedy')).data, { x: Buffer.from('y').toString('base64') });
});

test('deleting a request removes its identity from the cloud and its Secret', { timeout: 60_000 }, async () => {
  const secret = await provisionedSecret('openshift-cloud-controller-manager', 'cloud-controller-manager-cloud-credentials');
  await apiServer.kubectlOk(['delete', '-f', CCM_REQUEST, '--wait=true', '--timeout=30s']);
  await eventually('Secret deleted', async () => !(await kube.read(R.secrets, 'cloud-controller-manager-cloud-credentials', 'openshift-cloud-controller-manager')), 30_000);
  assert.ok(!(await cloud.client.listIdentities()).some((i) => i.name === 'openshift-cloud-controller-manager'));
  await assert.rejects(new CloudClient(cloud.service.url, secretCredential(secret)).listInstances(), (e: CloudError) => e.status === 401);
});
