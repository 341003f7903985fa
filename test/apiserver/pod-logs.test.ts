// `kubectl logs` and `kubectl logs -f` through the API server to a kubelet endpoint: a small
// HTTPS server in the test plays the kubelet on a 127.x address, checks that the API server
// comes with its kube-apiserver-kubelet-client certificate, and answers /containerLogs — all at
// once, or line by line for a follow, which must reach kubectl before the stream ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClusterServer } from '../../src/apiserver/cluster-server.js';
import { issueServingCert } from '../../src/common/pki.js';
import { KUBECTL, runKubectl } from '../helpers/apiserver.js';

interface Kubelet {
  server: Server;
  address: string;
  port: number;
  requests: { path: string; query: URLSearchParams; client: string }[];
  /** Ends every open follow stream. */
  finish(): void;
}

async function startKubelet(caPem: string, caKeyPem: string): Promise<Kubelet> {
  const address = `127.0.${77 + Math.floor(Math.random() * 100)}.${2 + Math.floor(Math.random() * 200)}`;
  const serving = await issueServingCert({ certPem: caPem, keyPem: caKeyPem }, 'kubelet', [address]);
  const open = new Set<() => void>();
  const requests: Kubelet['requests'] = [];
  const server = createServer({ key: serving.keyPem, cert: serving.certPem, ca: caPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const client = socket.authorized ? String(socket.getPeerCertificate().subject?.CN ?? '') : '';
    const url = new URL(req.url ?? '/', 'https://kubelet');
    requests.push({ path: url.pathname, query: url.searchParams, client });
    if (client !== 'kube-apiserver-kubelet-client') {
      res.writeHead(401).end('Unauthorized');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('line 1\nline 2\n');
    if (url.searchParams.get('follow') !== 'true') {
      res.end('line 3\n');
      return;
    }
    let n = 3;
    const timer = setInterval(() => res.write(`line ${n++}\n`), 100);
    const end = () => {
      clearInterval(timer);
      res.end('the end\n');
    };
    open.add(end);
    req.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const port = (server.address() as { port: number }).port;
  return { server, address, port, requests, finish: () => [...open].forEach((f) => f()) };
}

test('kubectl logs and logs -f reach the kubelet of the pod\'s node and stream back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-logs-'));
  const cluster = await startClusterServer({ dataDir: dir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  const kubelet = await startKubelet(cluster.server.caPem, readFileSync(join(dir, 'pki', 'ca.key'), 'utf8'));
  const kubeconfig = cluster.server.kubeconfigPath;
  const kubectl = (args: string[]) => runKubectl(kubeconfig, args);
  try {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } };
    assert.equal((await runKubectl(kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(node) })).code, 0);
    const status = { status: { addresses: [{ type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: kubelet.address }], daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } } } };
    assert.equal((await kubectl(['patch', 'node', 'n1', '--subresource=status', '--type=merge', '-p', JSON.stringify(status)])).code, 0);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'bosun.local/echo' }, { name: 'side', image: 'x' }] } };
    assert.equal((await runKubectl(kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(pod) })).code, 0);

    const logs = await kubectl(['logs', 'web', '-c', 'app', '--tail=5', '--timestamps', '--previous']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stdout, 'line 1\nline 2\nline 3\n');
    const seen = kubelet.requests.at(-1)!;
    assert.equal(seen.path, '/containerLogs/default/web/app');
    assert.equal(seen.client, 'kube-apiserver-kubelet-client');
    assert.deepEqual(Object.fromEntries(seen.query), { previous: 'true', tailLines: '5', timestamps: 'true' });

    const missing = await kubectl(['logs', 'web', '-c', 'nope']);
    assert.match(missing.stderr, /container nope is not valid for pod web/);

    // A follow: the first lines arrive while the kubelet still holds the stream open.
    const child = spawn(KUBECTL, ['--kubeconfig', kubeconfig, 'logs', '-f', 'web', '-c', 'side'], { env: { ...process.env, KUBECONFIG: '' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const deadline = Date.now() + 15_000;
    while (!out.includes('line 5\n')) {
      assert.ok(Date.now() < deadline, `no streamed lines from kubectl logs -f (got ${JSON.stringify(out)})`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(kubelet.requests.at(-1)!.query.get('follow'), 'true');
    assert.ok(!out.includes('the end'));
    kubelet.finish();
    assert.equal(await exited, 0);
    assert.match(out, /^line 1\nline 2\nline 3\nline 4\nline 5\n(line \d+\n)*the end\n$/);

    // A user who may read pods but not pods/log is refused before the kubelet is asked.
    const before = kubelet.requests.length;
    const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'viewer', namespace: 'default' } };
    await runKubectl(kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(sa) });
    assert.equal((await kubectl(['create', 'role', 'pod-reader', '--verb=get', '--resource=pods'])).code, 0);
    assert.equal((await kubectl(['create', 'rolebinding', 'viewer', '--role=pod-reader', '--serviceaccount=default:viewer'])).code, 0);
    const token = (await kubectl(['create', 'token', 'viewer'])).stdout.trim();
    const refused = await runKubectl(kubeconfig, ['--token', token, 'logs', 'web', '-c', 'app']);
    assert.match(refused.stderr, /cannot get resource "pods\/log"/);
    assert.equal(kubelet.requests.length, before);
  } finally {
    kubelet.server.closeAllConnections();
    kubelet.server.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
