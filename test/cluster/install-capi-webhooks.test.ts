// The install's wait for Cluster API's admission webhooks, against the real parts: the embedded API
// server calling the webhooks through the Service capi-controllers, the Cluster API webhook server
// serving the certificate the service CA issued for that Service, and the service CA's controllers
// injecting their bundle into the payload's webhook configurations.
//
// The intermittent install failure "failed calling webhook "default.machine.cluster.x-k8s.io": …
// self-signed certificate in certificate chain": the installer's check passed on a dry run alone,
// which also passes while the webhook configurations do not exist yet (the CVO applies them after
// the controllers' Deployment is healthy); its creates then raced the CVO's create of the
// configurations and the service CA's injection, and a write between the two was sent with no
// caBundle. Here each state of that window is held still: no configurations, configurations
// without a bundle, a bundle of another CA, then the service CA's own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as api from '../../src/api/index.js';
import { CLUSTER_API_NAMESPACE, LABEL, MACHINES } from '../../src/capi/api.js';
import { ClusterApiWebhookServer } from '../../src/capi/webhook-server.js';
import { payloadWebhookConfigurations, WEBHOOK_SERVICE } from '../../src/capi/webhooks.js';
import { webhooksAnswer } from '../../src/cluster/install/cluster-api.js';
import { createServiceCa } from '../../src/cluster/service-ca/serving-cert.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { KubeClient, KubeApiError } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources as R } from '../../src/kube/resources.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { installCrds } from '../capi/capi-fixture.js';

const SERVING_SECRET = 'capi-controllers-tls';
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

let apiServer: TestApiServer;
let client: KubeClient;
let webhookServer: ClusterApiWebhookServer;
const stopServer = new AbortController();
const certDir = mkdtempSync(join(tmpdir(), 'bosun-capi-webhook-tls-'));

/** The service CA's controllers (`controller-manager --controllers service-ca`) until the returned stop. */
function runServiceCa(): () => Promise<void> {
  const stop = new AbortController();
  const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(apiServer.kubeconfigPath), signal: stop.signal, leaderElection: false, controllers: ['service-ca'] });
  return async () => {
    stop.abort();
    await running;
  };
}

/** A master's Machine as the installer adopts one; Cluster API's mutating webhook labels it with its cluster. */
function machine(name: string): api.Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { name, namespace: CLUSTER_API_NAMESPACE },
    spec: { clusterName: 'bosun-local', bootstrap: { dataSecretName: 'master-user-data' }, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachine', name }, version: '1.33.0' },
  } as api.Machine;
}

/** The error the API server answers a create of `m` with (it must fail). */
async function refusal(m: api.Machine): Promise<KubeApiError> {
  const e = await client.create(MACHINES, m).then(() => undefined, (err: unknown) => err);
  assert.ok(e instanceof KubeApiError, `the create of Machine ${m.metadata.name} was refused (got ${String(e)})`);
  return e;
}

before(async () => {
  apiServer = await startTestApiServer();
  client = new KubeClient(loadKubeConfig(apiServer.kubeconfigPath));
  await installCrds(apiServer.kubectlOk);
  await client.create(R.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CLUSTER_API_NAMESPACE } });
  // The payload's Service (its webhook port), annotated for a serving certificate from the service CA.
  await client.create(R.services, {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: WEBHOOK_SERVICE.name, namespace: CLUSTER_API_NAMESPACE, annotations: { 'service.beta.openshift.io/serving-cert-secret-name': SERVING_SECRET } },
    spec: { selector: { 'k8s-app': 'cluster-api-controllers' }, ports: [{ name: 'webhook', port: WEBHOOK_SERVICE.port, targetPort: 9443 }] },
  });
  const stopServiceCa = runServiceCa();
  const secret = await eventually('the service CA issued the serving Secret', () => client.read(R.secrets, SERVING_SECRET, CLUSTER_API_NAMESPACE), 30_000);
  await stopServiceCa();
  // The Secret as the pod mounts it (--webhook-cert-dir), served by Cluster API's webhook server.
  writeFileSync(join(certDir, 'tls.crt'), unb64(secret.data?.['tls.crt']));
  writeFileSync(join(certDir, 'tls.key'), unb64(secret.data?.['tls.key']));
  webhookServer = new ClusterApiWebhookServer({ listen: { host: '127.0.0.1', port: 0 }, certDir });
  void webhookServer.start(stopServer.signal);
  await webhookServer.listening;
  await client.create(R.endpoints, {
    apiVersion: 'v1', kind: 'Endpoints', metadata: { name: WEBHOOK_SERVICE.name, namespace: CLUSTER_API_NAMESPACE },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'webhook', port: webhookServer.address!.port }] }],
  });
});

after(async () => {
  stopServer.abort();
  await webhookServer?.stop();
  await apiServer?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

test("the install waits for Cluster API's webhooks until their configurations carry the service CA's bundle; a call the bundle does not verify is refused naming the webhook and the bundle", { timeout: 120_000 }, async () => {
  // The controllers answer, but the CVO has not applied the webhook configurations yet: a dry run
  // passes (no webhook matches), and so would the installer's objects — without Cluster API's
  // defaults. Not ready.
  await client.create(MACHINES, machine('before-configurations'), { dryRun: 'All' });
  const before = await webhooksAnswer(client);
  assert.match(before, /^not answering yet \(capi-mutating-webhook-configuration and capi-validating-webhook-configuration not created yet\)$/);

  // The CVO creates them as the payload has them: no caBundle until the service CA injects it.
  const [mutating, validating] = payloadWebhookConfigurations();
  await client.create(R.mutatingWebhookConfigurations, mutating);
  await client.create(R.validatingWebhookConfigurations, validating);
  assert.match(await webhooksAnswer(client), /the service CA's bundle not injected into capi-mutating-webhook-configuration and capi-validating-webhook-configuration yet/);
  // The failure the install met in that window, and what the API server now says about it.
  const uninjected = await refusal(machine('without-bundle'));
  assert.equal(uninjected.code, 500);
  assert.match(uninjected.message, /failed calling webhook "default\.machine\.cluster\.x-k8s\.io": failed to call webhook: Post "https:\/\/capi-controllers\.openshift-cluster-api\.svc:443\/mutate-cluster-x-k8s-io-v1beta2-machine\?timeout=10s": tls: failed to verify certificate: self-signed certificate in certificate chain/);
  assert.match(uninjected.message, /the webhook has no clientConfig\.caBundle, and the system's trust roots did not verify the serving certificate/);

  // A bundle of another CA (a CA made again, or injected from another signer): refused too, saying so.
  const other = Buffer.from((await createServiceCa(new Date())).pair.certPem).toString('base64');
  const live = await client.get(R.mutatingWebhookConfigurations, mutating.metadata.name);
  await client.update(R.mutatingWebhookConfigurations, { ...live, webhooks: (live.webhooks ?? []).map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: other } })) });
  const otherCa = await refusal(machine('other-bundle'));
  assert.match(otherCa.message, /failed calling webhook "default\.machine\.cluster\.x-k8s\.io": .*tls: failed to verify certificate: self-signed certificate in certificate chain \(the webhook's clientConfig\.caBundle did not verify the serving certificate/);
  assert.notEqual(await webhooksAnswer(client), 'answering');

  // The service CA injects its own bundle into both (replacing the other one): the webhooks answer,
  // and a Machine is stored with Cluster API's defaults.
  const stopServiceCa = runServiceCa();
  try {
    await eventually('the webhooks answering', async () => (await webhooksAnswer(client)) === 'answering', 30_000);
    const stored = await client.create(MACHINES, machine('adopted'));
    assert.equal(stored.metadata.labels?.[LABEL.clusterName], 'bosun-local', "Cluster API's mutating webhook labelled it");
    assert.equal(stored.spec.version, 'v1.33.0');
  } finally {
    await stopServiceCa();
  }
});
