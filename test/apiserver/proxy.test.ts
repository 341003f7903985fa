// The proxy subresources through the API server with the real kubectl (`get --raw`, `create
// --raw`): a pod's IP on its first port or the one named, a service's ready endpoint on the port
// named, a node's kubelet as the API server's kubelet-client certificate; any method and body, the
// path after /proxy with its query and trailing slash, the caller's token not passed on; a service
// without endpoints and an unreachable pod answered 503; RBAC on `<resource>/proxy`. Small servers
// in the test play the pod (HTTP) and the kubelet (HTTPS) on 127.x addresses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClusterServer } from '../../src/apiserver/cluster-server.js';
import { issueServingCert } from '../../src/common/pki.js';
import { runKubectl } from '../helpers/apiserver.js';

const address = () => `127.0.${77 + Math.floor(Math.random() * 100)}.${2 + Math.floor(Math.random() * 200)}`;

/** Answers what it was asked: method, path and query, whether a token came, the body. */
function echo(req: IncomingMessage, res: ServerResponse, who: string): void {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain', 'x-answered-by': who }).end(`${who} ${req.method} ${req.url} token=${req.headers.authorization ? 'yes' : 'no'}${body ? ` body=${body}` : ''}`));
}

test('pods/proxy, services/proxy and nodes/proxy reach the pod, an endpoint and the kubelet', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-proxy-'));
  const cluster = await startClusterServer({ dataDir: dir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  const kubeconfig = cluster.server.kubeconfigPath;
  const kubectl = (args: string[], input?: string) => runKubectl(kubeconfig, args, { input });
  const podIP = address();
  const pod = createHttpServer((req, res) => echo(req, res, 'pod'));
  await new Promise<void>((resolve) => pod.listen(0, podIP, resolve));
  const podPort = (pod.address() as { port: number }).port;
  const kubeletIP = address();
  const serving = await issueServingCert({ certPem: cluster.server.caPem, keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') }, 'kubelet', [kubeletIP]);
  const kubelet = createHttpsServer({ key: serving.keyPem, cert: serving.certPem, ca: cluster.server.caPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const tls = req.socket as TLSSocket;
    echo(req, res, `kubelet(${tls.authorized ? String(tls.getPeerCertificate().subject?.CN) : 'anonymous'})`);
  });
  await new Promise<void>((resolve) => kubelet.listen(0, kubeletIP, resolve));
  const kubeletPort = (kubelet.address() as { port: number }).port;
  try {
    const create = async (object: object) => assert.equal((await kubectl(['create', '-f', '-'], JSON.stringify(object))).code, 0);
    await create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    assert.equal((await kubectl(['patch', 'node', 'n1', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { addresses: [{ type: 'InternalIP', address: kubeletIP }], daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } } })])).code, 0);
    await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'bosun.local/echo', ports: [{ name: 'http', containerPort: podPort }] }] } });
    assert.equal((await kubectl(['patch', 'pod', 'web', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { podIP, phase: 'Running' } })])).code, 0);
    await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: podPort }, { name: 'admin', port: 81 }] } });
    await create({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web', namespace: 'default' }, subsets: [{ addresses: [{ ip: podIP }], ports: [{ name: 'http', port: podPort }] }] });
    await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'empty', namespace: 'default' }, spec: { ports: [{ port: 80 }] } });

    const raw = async (path: string) => {
      const r = await kubectl(['get', '--raw', path]);
      assert.equal(r.code, 0, `${path}: ${r.stderr}`);
      return r.stdout;
    };
    assert.equal(await raw('/api/v1/namespaces/default/pods/web/proxy/hello?x=1&y=2'), 'pod GET /hello?x=1&y=2 token=no');
    assert.equal(await raw(`/api/v1/namespaces/default/pods/web:${podPort}/proxy/`), 'pod GET / token=no');
    assert.equal(await raw('/api/v1/namespaces/default/pods/http:web:http/proxy/a/b/'), 'pod GET /a/b/ token=no');
    writeFileSync(join(dir, 'body.json'), '{"sent":true}');
    const posted = await kubectl(['create', '--raw', '/api/v1/namespaces/default/pods/web/proxy/submit', '-f', join(dir, 'body.json')]);
    assert.equal(posted.stdout, 'pod POST /submit token=no body={"sent":true}', posted.stderr);
    assert.equal(await raw('/api/v1/namespaces/default/services/web:http/proxy/through-service'), 'pod GET /through-service token=no');
    assert.equal(await raw('/api/v1/namespaces/default/services/web:80/proxy/by-number'), 'pod GET /by-number token=no');
    assert.equal(await raw('/api/v1/nodes/n1/proxy/metrics/resource'), 'kubelet(kube-apiserver-kubelet-client) GET /metrics/resource token=no');

    const refused = async (path: string, pattern: RegExp) => {
      const r = await kubectl(['get', '--raw', path]);
      assert.notEqual(r.code, 0, path);
      assert.match(r.stderr, pattern);
    };
    await refused('/api/v1/namespaces/default/services/empty/proxy/', /no endpoints available for service "empty"/);
    await refused('/api/v1/namespaces/default/services/web/proxy/', /service web has 2 ports: name one \(web:<port>\)/);
    await refused('/api/v1/namespaces/default/services/web:admin/proxy/', /no endpoints available for service "web"/);
    await refused('/api/v1/namespaces/default/pods/nope/proxy/', /pods "nope" not found/);
    await refused('/api/v1/namespaces/default/pods/web:1/proxy/', /error trying to reach service: connect ECONNREFUSED/);

    // `<resource>/proxy` is authorized on its own: reading pods is not enough.
    await kubectl(['create', 'serviceaccount', 'reader']);
    await kubectl(['create', 'role', 'pod-reader', '--verb=get', '--resource=pods']);
    await kubectl(['create', 'rolebinding', 'reader', '--role=pod-reader', '--serviceaccount=default:reader']);
    const denied = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/', '--as=system:serviceaccount:default:reader']);
    assert.match(denied.stderr, /cannot get resource "pods\/proxy"/);
  } finally {
    pod.closeAllConnections();
    pod.close();
    kubelet.closeAllConnections();
    kubelet.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
