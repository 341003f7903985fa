// The service CA's pure rules (src/cluster/service-ca/serving-cert.ts), one row per case: when a
// Service's serving-cert Secret is left alone, issued again, or refused as another Service's; and
// which objects ask for a Secret or a CA bundle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { createServiceCa, judgeServingSecret, requestedSecretName, servingSecret, wantsCaBundle } from '../../src/cluster/service-ca/serving-cert.js';

const service: api.Service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'widget', namespace: 'ns', uid: 'uid-1', annotations: { 'service.beta.openshift.io/serving-cert-secret-name': 'widget-tls' } },
};

test('judgeServingSecret: none, issue or conflict', async () => {
  const now = new Date('2026-11-27T00:00:00Z');
  const ca = await createServiceCa(now);
  const other = await createServiceCa(now);
  const good = await servingSecret(service, 'widget-tls', ca, now);
  const withAnnotations = (a: Record<string, string>): api.Secret => ({ ...good, metadata: { ...good.metadata, annotations: { ...good.metadata.annotations, ...a } } });
  const fromOther = await servingSecret(service, 'widget-tls', other, now);
  const forOtherName = await servingSecret({ ...service, metadata: { ...service.metadata, name: 'gadget' } }, 'widget-tls', ca, now);
  const rows: Array<{ name: string; secret: api.Secret | undefined; at?: Date; want: string }> = [
    { name: 'no Secret', secret: undefined, want: 'issue' },
    { name: 'freshly issued', secret: good, want: 'none' },
    { name: 'another Service\'s (uid)', secret: withAnnotations({ 'service.beta.openshift.io/originating-service-uid': 'uid-2' }), want: 'conflict' },
    { name: 'owner reference lost', secret: { ...good, metadata: { ...good.metadata, ownerReferences: [] } }, want: 'issue' },
    { name: 'no expiry annotation', secret: { ...good, metadata: { ...good.metadata, annotations: { 'service.beta.openshift.io/originating-service-uid': 'uid-1', 'service.beta.openshift.io/originating-service-name': 'widget' } } }, want: 'issue' },
    { name: 'less than an hour left', secret: good, at: new Date(Date.parse(good.metadata.annotations!['service.beta.openshift.io/expiry']) - 30 * 60_000), want: 'issue' },
    { name: 'more than an hour left', secret: good, at: new Date(Date.parse(good.metadata.annotations!['service.beta.openshift.io/expiry']) - 2 * 3600_000), want: 'none' },
    { name: 'signed by another CA', secret: fromOther, want: 'issue' },
    { name: 'names another Service', secret: { ...forOtherName, metadata: good.metadata }, want: 'issue' },
    { name: 'a key beside tls.crt and tls.key', secret: { ...good, data: { ...good.data, extra: 'eA==' } }, want: 'issue' },
    { name: 'tls.crt not a certificate', secret: { ...good, data: { ...good.data, 'tls.crt': Buffer.from('ascii art').toString('base64') } }, want: 'issue' },
  ];
  for (const row of rows) assert.equal(judgeServingSecret(service, row.secret, ca, row.at ?? now).action, row.want, row.name);
  const verdict = judgeServingSecret(service, good, ca, now);
  assert.equal(verdict.action === 'none' && verdict.renewAt.toISOString(), new Date(Date.parse(good.metadata.annotations!['service.beta.openshift.io/expiry']) - 3600_000).toISOString(), 'renewed an hour before expiry');
});

test('which Services and ConfigMaps ask for a Secret or the bundle', () => {
  const annotated = (a: Record<string, string>) => ({ metadata: { name: 'x', namespace: 'ns', annotations: a } });
  assert.equal(requestedSecretName(service), 'widget-tls');
  assert.equal(requestedSecretName(annotated({ 'service.alpha.openshift.io/serving-cert-secret-name': 'old' }) as api.Service), 'old');
  assert.equal(requestedSecretName(annotated({}) as api.Service), undefined);
  assert.equal(wantsCaBundle(annotated({ 'service.beta.openshift.io/inject-cabundle': 'true' }) as api.ConfigMap), true);
  assert.equal(wantsCaBundle(annotated({ 'service.beta.openshift.io/inject-cabundle': 'TRUE' }) as api.ConfigMap), true);
  assert.equal(wantsCaBundle(annotated({ 'service.alpha.openshift.io/inject-cabundle': 'true' }) as api.ConfigMap), true);
  assert.equal(wantsCaBundle(annotated({ 'service.beta.openshift.io/inject-cabundle': 'false' }) as api.ConfigMap), false);
  assert.equal(wantsCaBundle(annotated({}) as api.ConfigMap), false);
});
