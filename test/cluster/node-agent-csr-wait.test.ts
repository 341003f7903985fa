// The node agent's wait for its certificate (src/cluster/node-agent/credentials.ts
// requestCertificate): it watches its CSR, as client-go's WaitForCertificate does, so a certificate
// the signer writes is taken at once — here with the re-read every 10 minutes, which alone would
// not see it within the test — and a denied request is an error naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { logger } from '../../src/common/log.js';
import { nodeCertificateRequest } from '../../src/cluster/node-agent/certificates.js';
import { CLIENT_SIGNER, requestCertificate } from '../../src/cluster/node-agent/credentials.js';
import { CSRS } from '../../src/cluster/node-agent/resources.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

const TEN_MINUTES = 600_000;

test('a certificate written to the CSR is taken from the watch, and a denied CSR is an error', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer({ port: 0 });
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const stop = new AbortController();
  try {
    const pending = async () => (await client.list(CSRS)).items.filter((c: api.CertificateSigningRequest) => !c.status?.certificate && !(c.status?.conditions ?? []).length);
    const request = await nodeCertificateRequest('node-a');
    const spec = { csrPem: request.csrPem, signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'] };
    const issued = requestCertificate(client, spec, stop.signal, logger('csr-test'), TEN_MINUTES);
    const [csr] = await eventually('the CSR sent', async () => { const p = await pending(); return p.length === 1 && p; }, 20_000) as api.CertificateSigningRequest[];
    // The signer's part, done by hand: the certificate in the CSR's status.
    const certificate = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
    await api.request('PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${csr.metadata.name}/status`, {
      body: { ...csr, status: { certificate: Buffer.from(certificate).toString('base64') } },
    });
    const winner = await Promise.race([issued, new Promise((r) => setTimeout(() => r('not yet'), 20_000).unref())]);
    assert.equal(winner, certificate);

    const denied = requestCertificate(client, spec, stop.signal, logger('csr-test'), TEN_MINUTES);
    const refused = assert.rejects(denied, /certificate signing request csr-\w+ was denied: not this one/);
    const [second] = await eventually('the second CSR sent', async () => { const p = await pending(); return p.length === 1 && p; }, 20_000) as api.CertificateSigningRequest[];
    await api.request('PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${second.metadata.name}/approval`, {
      body: { ...second, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'Refused', message: 'not this one' }] } },
    });
    await refused;
  } finally {
    stop.abort();
    await api.stop();
  }
});
