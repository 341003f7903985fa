// bosun's own kubeconfig reader (src/kube/kubeconfig.ts) against the real API server: a token
// kubeconfig in YAML, a client-certificate one in JSON with files relative to it, $KUBECONFIG's
// files merged as kubectl merges them, token files read again once a minute old, certificate
// files kept and read again when they change, one kept-alive
// agent per cluster, an exec credential plugin (handed to client-node's KubeConfig), and the
// errors a broken kubeconfig gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { createCA, issueClientCert } from '../../src/common/pki.js';
import { KubeConfig, loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { KubeClient } from '../../src/kube/client.js';

const namespaces = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };

function kubeconfig(server: string, cluster: Record<string, unknown>, user: Record<string, unknown>, name = 'c') {
  return {
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name, cluster: { server, ...cluster } }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'kube-system' } }],
    'current-context': name,
  };
}

test('kubeconfigs in YAML and JSON, tokens, client certificates and files relative to the kubeconfig reach the API server', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeconfig-'));
  try {
    const server = `https://127.0.0.1:${api.port}`;
    const ca = Buffer.from(api.caPem).toString('base64');
    // YAML, a token, the CA inline.
    writeFileSync(join(dir, 'token.yaml'), stringify(kubeconfig(server, { 'certificate-authority-data': ca }, { token: api.token })));
    const byToken = loadKubeConfig(join(dir, 'token.yaml'));
    assert.equal(byToken.getContextObject(byToken.getCurrentContext())?.namespace, 'kube-system');
    assert.ok((await new KubeClient(byToken).list(namespaces)).items.some((n) => n.metadata.name === 'default'));

    // JSON, a token file and the CA as a file, both named relative to the kubeconfig's directory.
    writeFileSync(join(dir, 'ca.crt'), api.caPem);
    writeFileSync(join(dir, 'token'), `${api.token}\n`);
    writeFileSync(join(dir, 'files.json'), JSON.stringify(kubeconfig(server, { 'certificate-authority': 'ca.crt' }, { 'token-file': 'token' })));
    const byFiles = loadKubeConfig(join(dir, 'files.json'));
    assert.equal(byFiles.getCurrentCluster()?.caFile, join(dir, 'ca.crt'));
    assert.equal((await new KubeClient(byFiles).get(namespaces, 'default')).metadata.name, 'default');

    // A wrong CA: the TLS check fails.
    const other = await createCA('not-the-cluster-ca');
    writeFileSync(join(dir, 'wrong-ca.yaml'), stringify(kubeconfig(server, { 'certificate-authority-data': Buffer.from(other.certPem).toString('base64') }, { token: api.token })));
    await assert.rejects(new KubeClient(loadKubeConfig(join(dir, 'wrong-ca.yaml'))).list(namespaces), /self-signed|certificate/);
    // ... unless the kubeconfig says not to check.
    writeFileSync(join(dir, 'insecure.yaml'), stringify(kubeconfig(server, { 'insecure-skip-tls-verify': true }, { token: api.token })));
    assert.ok((await new KubeClient(loadKubeConfig(join(dir, 'insecure.yaml'))).list(namespaces)).items.length > 0);
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a client certificate the cluster CA signed authenticates as its subject', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  await enableAccessControl(api.server, api.dataDir);
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeconfig-'));
  try {
    const ca = { certPem: readFileSync(join(api.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(api.dataDir, 'pki', 'ca.key'), 'utf8') };
    const client = await issueClientCert(ca, { commonName: 'jane', organizations: ['developers'] });
    writeFileSync(join(dir, 'jane.crt'), client.certPem);
    writeFileSync(join(dir, 'jane.key'), client.keyPem);
    writeFileSync(join(dir, 'jane.json'), JSON.stringify(kubeconfig(`https://127.0.0.1:${api.port}`, { 'certificate-authority-data': Buffer.from(api.caPem).toString('base64') }, { 'client-certificate': 'jane.crt', 'client-key': 'jane.key' })));
    // Jane may not list namespaces: the 403 names her, so the certificate was what authenticated.
    const kube = new KubeClient(loadKubeConfig(join(dir, 'jane.json')));
    await assert.rejects(kube.list(namespaces), (e: Error & { code?: number }) => e.code === 403 && /"jane"/.test(e.message));
    // The files are read once and kept, but a rotated certificate is used within a second or so.
    const rotated = await issueClientCert(ca, { commonName: 'joe', organizations: ['developers'] });
    writeFileSync(join(dir, 'jane.crt'), rotated.certPem);
    writeFileSync(join(dir, 'jane.key'), rotated.keyPem);
    await eventually('the rotated certificate in use', () => kube.list(namespaces).then(() => false, (e: Error & { code?: number }) => e.code === 403 && /"joe"/.test(e.message)), 10_000);
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('$KUBECONFIG files merge as kubectl merges them: the first to name an entry or set current-context wins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeconfig-'));
  const saved = process.env.KUBECONFIG;
  try {
    const first = kubeconfig('https://first.example:6443', {}, { token: 'first' }, 'shared');
    const second = { ...kubeconfig('https://second.example:6443', {}, { token: 'second' }, 'shared'), 'current-context': 'other' };
    second.clusters.push({ name: 'other', cluster: { server: 'https://other.example:6443' } });
    second.users.push({ name: 'other', user: { token: 'other' } });
    second.contexts.push({ name: 'other', context: { cluster: 'other', user: 'other', namespace: 'default' } });
    writeFileSync(join(dir, 'first'), JSON.stringify({ ...first, 'current-context': undefined }));
    writeFileSync(join(dir, 'second'), stringify(second));
    process.env.KUBECONFIG = `${join(dir, 'first')}:${join(dir, 'second')}`;
    const kc = loadKubeConfig();
    // current-context from the second file (the first sets none); `shared` from the first.
    assert.equal(kc.getCurrentContext(), 'other');
    assert.equal(kc.getCurrentCluster()?.server, 'https://other.example:6443');
    assert.equal(kc.clusters.find((c) => c.name === 'shared')?.server, 'https://first.example:6443');
    assert.equal(kc.users.find((u) => u.name === 'shared')?.token, 'first');
  } finally {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a token file is read again once it is a minute old; requests to one cluster share one kept-alive agent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeconfig-'));
  try {
    writeFileSync(join(dir, 'token'), 'one');
    const kc = new KubeConfig();
    kc.loadFromString(JSON.stringify(kubeconfig('https://127.0.0.1:6443', {}, { 'token-file': join(dir, 'token') })));
    const apply = async () => {
      const opts: RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      return opts;
    };
    const first = await apply();
    assert.equal((first.headers as Record<string, string>).Authorization, 'Bearer one');
    writeFileSync(join(dir, 'token'), 'two');
    const second = await apply();
    assert.equal((second.headers as Record<string, string>).Authorization, 'Bearer one', 'read again only once a minute old');
    assert.equal(second.agent, first.agent);
    assert.equal((first.agent as { keepAlive?: boolean }).keepAlive, true);
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      assert.equal(((await apply()).headers as Record<string, string>).Authorization, 'Bearer two');
    } finally {
      Date.now = realNow;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an exec credential plugin is run through client-node and its token used', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeconfig-'));
  try {
    const plugin = join(dir, 'credential-plugin');
    const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: api.token } };
    writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`);
    chmodSync(plugin, 0o755);
    writeFileSync(join(dir, 'exec.yaml'), stringify(kubeconfig(`https://127.0.0.1:${api.port}`, { 'certificate-authority-data': Buffer.from(api.caPem).toString('base64') }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } })));
    const client = new KubeClient(loadKubeConfig(join(dir, 'exec.yaml')));
    assert.equal((await client.get(namespaces, 'default')).metadata.name, 'default');
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a broken kubeconfig says what is wrong with it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeconfig-'));
  try {
    const cases: Array<[string, RegExp]> = [
      ['clusters: [{ name: c, cluster: {} }]', /clusters\[0\]\.cluster\.server is missing/],
      ['contexts: [{ context: { cluster: c } }]', /contexts\[0\]\.name is missing/],
      ['- just\n- a list', /must be a mapping/],
      ['clusters: [{ name: c, cluster: { server: "https://x" } }]\ncurrent-context: nowhere', /names no current cluster/],
    ];
    for (const [text, error] of cases) {
      writeFileSync(join(dir, 'config'), text);
      assert.throws(() => loadKubeConfig(join(dir, 'config')), error, text);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
