// The built-in signers' rules (which request each signs, which it fails and why) and the signing
// controller's decision, on real PKCS#10 requests made with the cluster's PKI helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCertificateRequest } from '../../src/common/pki.js';
import { parseCertificateRequest, RequestError } from '../../src/apiserver/certificates/request.js';
import { APISERVER_CLIENT_SIGNER, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, signerRefusal } from '../../src/apiserver/certificates/signers.js';
import { certificateDuration, decide } from '../../src/apiserver/certificates/signing-controller.js';
import { authorizedForSigner } from '../../src/apiserver/certificates/admission.js';

const node = { commonName: 'system:node:worker-0', organizations: ['system:nodes'] };
const request = async (subject: Parameters<typeof createCertificateRequest>[0], hosts: string[] = []) => parseCertificateRequest((await createCertificateRequest(subject, hosts)).requestPem);

test('each built-in signer accepts what kube accepts and refuses the rest with its reason', async () => {
  const nodeClient = await request(node);
  const nodeServing = await request(node, ['127.0.1.4', 'worker-0']);
  const stranger = await request({ commonName: 'alice', organizations: ['devs'] });
  const twoOrgs = await request({ commonName: 'system:node:worker-0', organizations: ['system:nodes', 'system:masters'] });
  const notANode = await request({ commonName: 'worker-0', organizations: ['system:nodes'] });
  const table: [string, string, typeof nodeClient, string[], RegExp | undefined][] = [
    ['kubelet client', KUBELET_CLIENT_SIGNER, nodeClient, ['digital signature', 'key encipherment', 'client auth'], undefined],
    ['kubelet client, client auth only', KUBELET_CLIENT_SIGNER, nodeClient, ['client auth'], undefined],
    ['kubelet client without client auth', KUBELET_CLIENT_SIGNER, nodeClient, ['digital signature'], /missing required usage for kubelet client certificate: client auth/],
    ['kubelet client asking for server auth', KUBELET_CLIENT_SIGNER, nodeClient, ['client auth', 'server auth'], /invalid usage for kubelet client certificate: server auth/],
    ['kubelet client for a user', KUBELET_CLIENT_SIGNER, stranger, ['client auth'], /subject organization is not system:nodes/],
    ['kubelet client with another group too', KUBELET_CLIENT_SIGNER, twoOrgs, ['client auth'], /subject organization is not system:nodes/],
    ['kubelet client without the node prefix', KUBELET_CLIENT_SIGNER, notANode, ['client auth'], /does not begin with system:node:/],
    ['kubelet client with alternative names', KUBELET_CLIENT_SIGNER, nodeServing, ['client auth'], /dnsNames are not allowed/],
    ['kubelet serving', KUBELET_SERVING_SIGNER, nodeServing, ['digital signature', 'key encipherment', 'server auth'], undefined],
    ['kubelet serving without names', KUBELET_SERVING_SIGNER, nodeClient, ['server auth'], /DNS or IP subjectAltName is required/],
    ['kubelet serving asking for client auth', KUBELET_SERVING_SIGNER, nodeServing, ['server auth', 'client auth'], /invalid usage for kubelet serving certificate: client auth/],
    ['kubelet serving for a user', KUBELET_SERVING_SIGNER, await request({ commonName: 'alice' }, ['a.example']), ['server auth'], /subject organization/],
    ['api server client for anyone', APISERVER_CLIENT_SIGNER, stranger, ['client auth'], undefined],
    ['api server client asking for server auth', APISERVER_CLIENT_SIGNER, stranger, ['client auth', 'server auth'], /invalid usage for client certificate: server auth/],
    ['an unknown signer', 'example.com/mine', stranger, ['client auth'], /unrecognized signerName/],
  ];
  for (const [name, signer, req, usages, expected] of table) {
    const refusal = signerRefusal(signer, req, usages);
    if (expected) assert.match(refusal ?? '', expected, name);
    else assert.equal(refusal, undefined, name);
  }
});

test('requests are parsed with their subject and alternative names; other PEM is refused', async () => {
  const parsed = await request(node, ['127.0.1.4', 'worker-0']);
  assert.equal(parsed.commonName, 'system:node:worker-0');
  assert.deepEqual(parsed.organizations, ['system:nodes']);
  assert.deepEqual(parsed.ipAddresses, ['127.0.1.4']);
  assert.deepEqual(parsed.dnsNames, ['worker-0']);
  assert.throws(() => parseCertificateRequest('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), RequestError);
  assert.throws(() => parseCertificateRequest('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n'), RequestError);
  assert.throws(() => parseCertificateRequest('not pem'), /PEM block type must be CERTIFICATE REQUEST/);
});

test('the controller signs only approved, unfailed, unissued requests to built-in signers', async () => {
  const pem = (await createCertificateRequest(node)).requestPem;
  const csr = (conditions: string[], extra: Record<string, unknown> = {}) => ({
    metadata: { name: 'c' },
    spec: { request: Buffer.from(pem).toString('base64'), signerName: KUBELET_CLIENT_SIGNER, usages: ['client auth'], ...extra },
    status: { conditions: conditions.map((type) => ({ type, status: 'True' })) },
  });
  assert.deepEqual(await decide(csr([])), { action: 'none' });
  assert.deepEqual(await decide(csr(['Denied'])), { action: 'none' });
  assert.deepEqual(await decide(csr(['Approved', 'Failed'])), { action: 'none' });
  assert.deepEqual(await decide(csr(['Approved'], { signerName: 'example.com/other' })), { action: 'none' });
  assert.deepEqual(await decide(csr(['Approved'])), { action: 'sign' });
  assert.deepEqual(await decide({ ...csr(['Approved']), status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'x' } }), { action: 'none' });
  assert.deepEqual(await decide(csr(['Approved'], { usages: ['server auth'] })), { action: 'fail', message: 'invalid usage for kubelet client certificate: server auth' });
  // A request whose signature does not match its key proves nothing about who holds the key.
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  der[der.length - 5] ^= 0xff;
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  const decision = await decide(csr(['Approved'], { request: Buffer.from(tampered).toString('base64') }));
  assert.equal(decision.action, 'fail');
});

test('certificate lifetimes honour expirationSeconds between ten minutes and the maximum', () => {
  const year = 365 * 86400_000;
  assert.equal(certificateDuration(undefined, year), year);
  assert.equal(certificateDuration(3600, year), 3600_000);
  assert.equal(certificateDuration(60, year), 600_000);
  assert.equal(certificateDuration(10 * 365 * 86400, year), year);
});

test('approving and signing are authorized per signer name, or its domain\'s wildcard', () => {
  const user = { name: 'approver', groups: [] };
  const allowing = (names: string[]) => (a: { verb: string; apiGroup: string; resource: string; name: string }) =>
    (a.apiGroup === 'certificates.k8s.io' && a.resource === 'signers' && a.verb === 'approve' && names.includes(a.name) ? undefined : 'no');
  assert.equal(authorizedForSigner(allowing([KUBELET_CLIENT_SIGNER]), user, 'approve', KUBELET_CLIENT_SIGNER), true);
  assert.equal(authorizedForSigner(allowing([KUBELET_CLIENT_SIGNER]), user, 'approve', KUBELET_SERVING_SIGNER), false);
  assert.equal(authorizedForSigner(allowing(['kubernetes.io/*']), user, 'approve', KUBELET_SERVING_SIGNER), true);
  assert.equal(authorizedForSigner(allowing(['kubernetes.io/*']), user, 'approve', 'example.com/mine'), false);
  assert.equal(authorizedForSigner(allowing(['kubernetes.io/*']), user, 'sign', KUBELET_SERVING_SIGNER), false);
});
