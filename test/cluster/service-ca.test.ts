// The service CA (`controller-manager --controllers service-ca`) against the embedded API server,
// as OpenShift's service-ca operator behaves: a Service annotated with
// service.beta.openshift.io/serving-cert-secret-name gets a kubernetes.io/tls Secret whose
// certificate names <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local and verifies against the
// bundle injected into an annotated ConfigMap (a real TLS handshake with that bundle as the only
// trust); the Secret carries OpenShift's annotations and owner; it is issued again when deleted and
// when near its expiry; a Secret another Service owns is never overwritten (the error is written on
// the Service); the CA is published in openshift-config-managed/service-ca.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:https';
import { connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { KubeClient } from '../../src/kube/client.js';
import { resources as R } from '../../src/kube/resources.js';
import { runWorkloadControllers, selectControllers } from '../../src/cluster/workloads/run.js';
import type * as api from '../../src/api/index.js';

const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

/** Completes a TLS handshake to a server holding `secret`, trusting only `ca`, for `servername`. */
async function handshake(secret: api.Secret, ca: string, servername: string): Promise<string | undefined> {
  const server = createServer({ cert: unb64(secret.data?.['tls.crt']), key: unb64(secret.data?.['tls.key']) }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string | undefined>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca, servername }, () => {
        socket.end();
        resolve(undefined);
      });
      socket.on('error', (e) => resolve(e.message));
    });
  } finally {
    server.close();
  }
}

test('the service CA issues, verifies, re-issues and injects', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  const stop = new AbortController();
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  assert.deepEqual(selectControllers('*').includes('service-ca'), false, 'off unless named');
  const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, leaderElection: false, controllers: ['service-ca'] });
  try {
    await api.kubectlOk(['create', 'namespace', 'metrics-test']);
    const service = await client.create(R.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'widget', namespace: 'metrics-test', annotations: { 'service.beta.openshift.io/serving-cert-secret-name': 'widget-tls' } },
      spec: { selector: { app: 'widget' }, ports: [{ name: 'metrics', port: 8443 }] },
    });
    await client.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'trust', namespace: 'metrics-test', annotations: { 'service.beta.openshift.io/inject-cabundle': 'true' } }, data: { other: 'kept' } });

    const secret = await eventually('the serving Secret', () => client.read(R.secrets, 'widget-tls', 'metrics-test'));
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(Object.keys(secret.data ?? {}).sort(), ['tls.crt', 'tls.key']);
    const a = secret.metadata.annotations ?? {};
    assert.equal(a['service.beta.openshift.io/originating-service-name'], 'widget');
    assert.equal(a['service.beta.openshift.io/originating-service-uid'], service.metadata.uid);
    assert.deepEqual(secret.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]), [['Service', 'widget', service.metadata.uid]]);
    const leaf = new X509Certificate(unb64(secret.data?.['tls.crt']));
    assert.equal(leaf.subjectAltName, 'DNS:widget.metrics-test.svc, DNS:widget.metrics-test.svc.cluster.local');
    assert.equal(new Date(a['service.beta.openshift.io/expiry']).getTime(), new Date(leaf.validTo).getTime());
    assert.equal(a['service.alpha.openshift.io/expiry'], a['service.beta.openshift.io/expiry']);
    const days = (new Date(leaf.validTo).getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 729 && days < 731, `valid two years, not ${days} days`);

    const injected = await eventually('the injected bundle', async () => (await client.read(R.configMaps, 'trust', 'metrics-test'))?.data?.['service-ca.crt']);
    assert.equal((await client.read(R.configMaps, 'trust', 'metrics-test'))?.data?.other, 'kept');
    const caCert = new X509Certificate(injected);
    assert.match(caCert.subject, /^CN=openshift-service-serving-signer@\d+$/);
    assert.ok(leaf.verify(caCert.publicKey), 'signed by the injected CA');
    assert.equal(await handshake(secret, injected, 'widget.metrics-test.svc'), undefined);
    assert.equal(await handshake(secret, injected, 'widget.metrics-test.svc.cluster.local'), undefined);
    assert.match((await handshake(secret, injected, 'other.metrics-test.svc')) ?? '', /altnames|Hostname/i, 'another name is refused');
    assert.match((await handshake(secret, api.caPem, 'widget.metrics-test.svc')) ?? '', /certificate/i, 'another CA is refused');

    const published = await client.read(R.configMaps, 'service-ca', 'openshift-config-managed');
    assert.equal(published?.data?.['ca-bundle.crt'], injected);
    assert.equal((await client.read(R.configMaps, 'signing-cabundle', 'openshift-service-ca'))?.data?.['ca-bundle.crt'], injected);
    const signing = await client.read(R.secrets, 'signing-key', 'openshift-service-ca');
    assert.equal(unb64(signing?.data?.['tls.crt']), injected);
    await eventually('the Service annotated signed-by', async () => (await client.read(R.services, 'widget', 'metrics-test'))?.metadata.annotations?.['service.beta.openshift.io/serving-cert-signed-by'] === caCert.subject.slice(3));

    // Deleted: issued again, a new certificate from the same CA.
    await client.delete(R.secrets, 'widget-tls', 'metrics-test');
    const again = await eventually('the Secret re-created', async () => {
      const s = await client.read(R.secrets, 'widget-tls', 'metrics-test');
      return s && s.metadata.uid !== secret.metadata.uid ? s : undefined;
    });
    const leaf2 = new X509Certificate(unb64(again.data?.['tls.crt']));
    assert.notEqual(leaf2.serialNumber, leaf.serialNumber);
    assert.ok(leaf2.verify(caCert.publicKey));

    // Near its expiry (less than an hour left, by its annotation): renewed in place.
    const soon = new Date(Date.now() + 30 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await client.mergePatch(R.secrets, 'widget-tls', 'metrics-test', { metadata: { annotations: { 'service.beta.openshift.io/expiry': soon } } });
    const renewed = await eventually('the Secret renewed', async () => {
      const s = await client.read(R.secrets, 'widget-tls', 'metrics-test');
      return s && s.metadata.annotations?.['service.beta.openshift.io/expiry'] !== soon ? s : undefined;
    });
    assert.equal(renewed.metadata.uid, again.metadata.uid, 'updated, not re-created');
    assert.notEqual(new X509Certificate(unb64(renewed.data?.['tls.crt'])).serialNumber, leaf2.serialNumber);

    // A Secret of that name that is not this Service's: left alone, the error on the Service.
    await client.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'taken', namespace: 'metrics-test' }, type: 'Opaque', data: { x: 'eA==' } });
    await client.create(R.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'squatter', namespace: 'metrics-test', annotations: { 'service.beta.openshift.io/serving-cert-secret-name': 'taken' } },
      spec: { ports: [{ port: 443 }] },
    });
    const error = await eventually('the generation error on the Service', async () => (await client.read(R.services, 'squatter', 'metrics-test'))?.metadata.annotations?.['service.beta.openshift.io/serving-cert-generation-error']);
    assert.match(error, /^secret metrics-test\/taken does not have corresponding service UID /);
    assert.deepEqual((await client.read(R.secrets, 'taken', 'metrics-test'))?.data, { x: 'eA==' });
  } finally {
    stop.abort();
    await running;
    await api.stop();
  }
});

test('the service CA injects its bundle into annotated webhook configurations, and the API server then trusts a webhook serving its certificate', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  const stop = new AbortController();
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, leaderElection: false, controllers: ['service-ca'] });
  let hook: ReturnType<typeof createServer> | undefined;
  try {
    await api.kubectlOk(['create', 'namespace', 'hooks']);
    await client.create(R.services, {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'guard', namespace: 'hooks', annotations: { 'service.beta.openshift.io/serving-cert-secret-name': 'guard-tls' } },
      spec: { ports: [{ name: 'webhook', port: 443, targetPort: 9443 }] },
    });
    const secret = await eventually('the serving Secret', () => client.read(R.secrets, 'guard-tls', 'hooks'));
    // A validating webhook that refuses every ConfigMap named "refused", serving the service CA's certificate.
    hook = createServer({ cert: unb64(secret.data?.['tls.crt']), key: unb64(secret.data?.['tls.key']) }, (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const request = JSON.parse(body).request;
        const allowed = request.name !== 'refused';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed, ...(allowed ? {} : { status: { code: 403, message: 'no' } }) } }));
      });
    });
    await new Promise<void>((resolve) => hook!.listen(0, '127.0.0.1', resolve));
    await client.create(R.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'guard', namespace: 'hooks' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'webhook', port: (hook.address() as AddressInfo).port }] }] });
    const webhook = (name: string) => ({
      name, clientConfig: { service: { namespace: 'hooks', name: 'guard', path: '/validate' } }, sideEffects: 'None', admissionReviewVersions: ['v1'],
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'nowhere' } },
    });
    await client.create(R.validatingWebhookConfigurations, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'plain' }, webhooks: [webhook('plain.hooks.bosun.io')] });
    await client.create(R.validatingWebhookConfigurations, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'guard', annotations: { 'service.beta.openshift.io/inject-cabundle': 'true' } },
      webhooks: [{ ...webhook('guard.hooks.bosun.io'), namespaceSelector: {} }],
    });
    const ca = await eventually('the signing CA bundle', async () => (await client.read(R.configMaps, 'signing-cabundle', 'openshift-service-ca'))?.data?.['ca-bundle.crt']);
    const injected = await eventually('caBundle injected', async () => (await client.read(R.validatingWebhookConfigurations, 'guard'))?.webhooks?.[0]?.clientConfig?.caBundle);
    assert.equal(unb64(injected), ca);
    assert.equal((await client.read(R.validatingWebhookConfigurations, 'plain'))?.webhooks?.[0]?.clientConfig?.caBundle, undefined, 'not annotated: left alone');
    const refused = await api.request('POST', '/api/v1/namespaces/hooks/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'refused' } } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.message, 'admission webhook "guard.hooks.bosun.io" denied the request: no');
    assert.equal((await api.request('POST', '/api/v1/namespaces/hooks/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'allowed' } } })).status, 201);
  } finally {
    stop.abort();
    await running;
    hook?.close();
    await api.stop();
  }
});
