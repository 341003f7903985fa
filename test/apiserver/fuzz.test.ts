// A seeded, bounded fuzz of the API server as an administrator: a few thousand malformed,
// oversized, deeply nested and wrongly typed requests across every endpoint family (discovery,
// OpenAPI, health/version/metrics, core and group resources, custom resources and their CRDs,
// subresources, watches, reviews), with odd methods, content types, query values and path
// segments. The server must stay up, answer every error with a well-formed `Status` and never
// with a 5xx (but the 504 ResourceVersionTooLarge kube-apiserver answers too), and leave the
// objects stored before the run exactly as they were.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { prng } from '../helpers/prng.js';

const SEED = 20261123;
const REQUESTS = 3000;
const PARALLEL = 6;

let api: TestApiServer;
let agent: Agent;
before(async () => {
  api = await startTestApiServer();
  agent = new Agent({ ca: api.caPem, keepAlive: true, maxSockets: PARALLEL });
});
after(async () => {
  agent.destroy();
  await api.stop();
});

interface Answer {
  status: number;
  contentType: string;
  text: string;
  /** A watch stream that started (read no further). */
  stream: boolean;
}

/** One request; a 200 that streams (a watch) is cut off after its headers. */
function send(method: string, path: string, body: Buffer | undefined, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string> = { authorization: `Bearer ${api.token}`, ...headers };
    if (body !== undefined) all['content-length'] = String(body.length);
    // The path is sent as it is: a URL object would resolve `.` and `..` segments first.
    const req = httpsRequest({ host: '127.0.0.1', port: api.port, path, method, headers: all, agent }, (res) => {
      const contentType = String(res.headers['content-type'] ?? '');
      if (res.statusCode === 200 && res.headers['transfer-encoding'] === 'chunked' && res.headers['content-length'] === undefined) {
        res.destroy();
        resolve({ status: 200, contentType, text: '', stream: true });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType, text: Buffer.concat(chunks).toString('utf8'), stream: false }));
      res.on('error', reject);
    });
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer to ${method} ${path.slice(0, 120)}`)));
    req.on('error', reject);
    req.end(body);
  });
}

type Random = () => number;

function generator(random: Random) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const int = (n: number) => Math.floor(random() * n);
  const chance = (p: number) => random() < p;

  const NAMESPACES = ['default', 'fz', 'missing-ns', '.', '..', '%2e%2e', 'a%2Fb', 'UPPER', 'x'.repeat(300), '%00', '%C3%BC', 'kube-system'];
  const NAMES = ['fz-a', 'fz-b', 'fz-c', '.', '..', '%2E', 'a%2Fb', 'x'.repeat(300), 'with%20space', '%ff', 'Bad_Name'];
  const name = () => (chance(0.5) ? `fz-${int(40)}` : pick(NAMES));
  const ns = () => pick(NAMESPACES);
  const SUBRESOURCES = ['status', 'scale', 'binding', 'eviction', 'token', 'log', 'exec', 'nosuch', '..'];

  const collections: (() => { path: string; clusterScoped: boolean; kind: string; apiVersion: string })[] = [
    () => ({ path: `/api/v1/namespaces/${ns()}/configmaps`, clusterScoped: false, kind: 'ConfigMap', apiVersion: 'v1' }),
    () => ({ path: `/api/v1/namespaces/${ns()}/secrets`, clusterScoped: false, kind: 'Secret', apiVersion: 'v1' }),
    () => ({ path: `/api/v1/namespaces/${ns()}/pods`, clusterScoped: false, kind: 'Pod', apiVersion: 'v1' }),
    () => ({ path: `/api/v1/namespaces/${ns()}/services`, clusterScoped: false, kind: 'Service', apiVersion: 'v1' }),
    () => ({ path: `/api/v1/namespaces/${ns()}/serviceaccounts`, clusterScoped: false, kind: 'ServiceAccount', apiVersion: 'v1' }),
    () => ({ path: '/api/v1/nodes', clusterScoped: true, kind: 'Node', apiVersion: 'v1' }),
    () => ({ path: '/api/v1/namespaces', clusterScoped: true, kind: 'Namespace', apiVersion: 'v1' }),
    () => ({ path: `/apis/apps/v1/namespaces/${ns()}/deployments`, clusterScoped: false, kind: 'Deployment', apiVersion: 'apps/v1' }),
    () => ({ path: `/apis/example.com/v1/namespaces/${ns()}/widgets`, clusterScoped: false, kind: 'Widget', apiVersion: 'example.com/v1' }),
    () => ({ path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', clusterScoped: true, kind: 'CustomResourceDefinition', apiVersion: 'apiextensions.k8s.io/v1' }),
    () => ({ path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', clusterScoped: true, kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1' }),
    () => ({ path: `/apis/coordination.k8s.io/v1/namespaces/${ns()}/leases`, clusterScoped: false, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1' }),
    () => ({ path: `/apis/policy/v1/namespaces/${ns()}/poddisruptionbudgets`, clusterScoped: false, kind: 'PodDisruptionBudget', apiVersion: 'policy/v1' }),
  ];
  const NON_RESOURCE = ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/apis/example.com/v1', '/apis/nope', '/apis/apps/v9', '/api/v2',
    '/openapi/v2', '/openapi/v3', '/openapi/v3/api/v1', '/openapi/v3/apis/apps/v1', '/openapi/v3/nope', '/version', '/healthz', '/livez', '/readyz',
    '/metrics', '/logs', '/debug/pprof', '/', '/nothing', '//', '/api//v1', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    '/apis/authorization.k8s.io/v1/subjectaccessreviews', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', '/apis/authentication.k8s.io/v1/selfsubjectreviews'];

  const BOOL = ['true', 'True', '1', 'false', 'F', '', 'yes', 'maybe', '2', 'TRUE '];
  const QUERY: Record<string, readonly string[]> = {
    watch: BOOL, allowWatchBookmarks: BOOL, pretty: BOOL, sendInitialEvents: BOOL, force: BOOL,
    limit: ['1', '0', '-1', 'abc', '99999999999999999999', '1.5'],
    continue: ['junk', 'eyJydiI6MSwic3RhcnQiOiIifQ', '%00'],
    resourceVersion: ['0', '1', 'abc', '-5', '99999999999'],
    labelSelector: ['a=b', 'a in (', '!!x', 'a=b=c', 'x'.repeat(2000), 'app notin (a,b)'],
    fieldSelector: ['metadata.name=fz-a', 'nonsense', 'spec.bogus=x', 'metadata.name=a=b'],
    dryRun: ['All', 'all', 'Bogus', ''],
    fieldManager: ['fz', '', 'x'.repeat(200)],
    fieldValidation: ['Strict', 'Warn', 'Ignore', 'Nope'],
    propagationPolicy: ['Orphan', 'Background', 'Foreground', 'Sideways'],
    timeoutSeconds: ['1', 'abc', '-1', '1.5'],
    includeObject: ['None', 'Object', 'Metadata', 'Weird'],
  };
  const query = () => {
    const params: string[] = [];
    for (let i = int(4); i > 0; i--) {
      const key = pick(Object.keys(QUERY));
      params.push(`${key}=${encodeURIComponent(pick(QUERY[key]))}`);
    }
    // A watch that starts must end by itself too (the client cuts it off after the headers).
    params.push('timeoutSeconds=1');
    return params.length > 0 ? `?${params.join('&')}` : '';
  };

  const nested = (depth: number, open: string, close: string, leaf: string) => open.repeat(depth) + leaf + close.repeat(depth);
  const WRONG = (): unknown => pick([5, -1, 1e308, 'str', '', true, null, [], [1, 'a'], {}, { a: { b: [] } }, 'x'.repeat(5000)]);
  const validish = (kind: string, apiVersion: string, n: string): Record<string, any> => {
    const base: Record<string, any> = { apiVersion, kind, metadata: { name: n, labels: { fz: '1' } } };
    switch (kind) {
      case 'ConfigMap': return { ...base, data: { k: 'v' } };
      case 'Secret': return { ...base, stringData: { k: 'v' } };
      case 'Pod': return { ...base, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
      case 'Deployment': return { ...base, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } };
      case 'Widget': return { ...base, spec: { size: 2, replicas: 1 } };
      case 'CustomResourceDefinition': return { ...base, metadata: { name: `fz${int(9)}s.fz.example.com`, labels: { fz: '1' } }, spec: { group: 'fz.example.com', scope: 'Namespaced', names: { plural: 'fzs', kind: 'Fz' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] } };
      default: return base;
    }
  };
  /** Replaces one random value somewhere in the object with a value of the wrong type. */
  const mistype = (object: Record<string, any>): Record<string, any> => {
    const copy = structuredClone(object);
    let cursor: any = copy;
    for (let steps = int(4); steps >= 0; steps--) {
      const keys = cursor && typeof cursor === 'object' ? Object.keys(cursor) : [];
      if (keys.length === 0) break;
      const key = pick(keys);
      if (steps === 0 || typeof cursor[key] !== 'object' || cursor[key] === null) {
        cursor[key] = WRONG();
        break;
      }
      cursor = cursor[key];
    }
    return copy;
  };

  const CONTENT_TYPES = ['application/json', 'application/yaml', 'application/merge-patch+json', 'application/json-patch+json',
    'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor',
    'text/plain', 'garbage/type', 'application/json; charset=utf-16', '*/*', 'multipart/form-data; boundary=x'];

  /** A body that no decoder accepts, or that nests or weighs too much: safe to aim at anything. */
  const brokenBody = (): { body: Buffer; contentType: string } => {
    switch (int(6)) {
      case 0: return { body: Buffer.from(pick(['{', '{"metadata":', 'not json', '[1,2', '{"a":}', '\u0000\u0001', '{"metadata":{"name":"x"}}}', ': - : ['])), contentType: pick(['application/json', 'application/merge-patch+json']) };
      case 1: return { body: Buffer.from(Array.from({ length: 1 + int(400) }, () => int(256))), contentType: pick(['application/json', 'application/vnd.kubernetes.protobuf', 'application/strategic-merge-patch+json']) };
      case 2: return { body: Buffer.from(nested(pick([301, 1000, 5000, 20000]), pick(['{"a":', '[']), pick(['}', ']']), '1')), contentType: pick(CONTENT_TYPES) };
      case 3: {
        const depth = pick([301, 900, 3000]);
        const yaml = pick([
          () => `${'- '.repeat(depth)}x\n`,
          () => Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + '\n',
          () => Array.from({ length: Math.ceil(depth / 2) + 1 }, (_, i) => `${'  '.repeat(i)}- a:`).join('\n') + '\n',
          () => nested(depth, '{a: ', '}', '1'),
          () => `a: &a [1]\n${Array.from({ length: depth }, (_, i) => `b${i}: &b${i} [*${i === 0 ? 'a' : `b${i - 1}`}, *${i === 0 ? 'a' : `b${i - 1}`}]`).join('\n')}\n`,
        ])();
        return { body: Buffer.from(yaml), contentType: pick(['application/yaml', 'application/apply-patch+yaml']) };
      }
      case 4: return { body: Buffer.alloc(3 * 1024 * 1024 + 1 + int(1000), 0x20), contentType: 'application/json' };
      default: return { body: Buffer.from('{"metadata":{"name":"x"}}'), contentType: pick(['application/cbor', 'garbage/type', 'multipart/form-data; boundary=x']) };
    }
  };

  const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'PATCH', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'TRACE', 'FOO'];

  /** One request; `aimsAtKept` requests may only carry broken bodies. */
  return (keptPaths: string[]): { method: string; path: string; body?: Buffer; headers: Record<string, string> } => {
    let method = pick(METHODS);
    const headers: Record<string, string> = {};
    if (chance(0.2)) headers.accept = pick(['application/json;as=Table;v=v1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf', 'text/html', 'application/json', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', '*/*']);
    let path: string;
    let body: { body: Buffer; contentType: string } | undefined;
    const family = int(10);
    if (family === 0) {
      path = pick(NON_RESOURCE);
    } else if (family === 1) {
      // An object stored before the run: only broken bodies and reads.
      path = pick(keptPaths);
      if (method !== 'GET' && method !== 'HEAD') {
        method = pick(['PUT', 'PATCH', 'POST']);
        body = brokenBody();
      }
    } else {
      const c = pick(collections)();
      const collection = chance(0.3);
      const sub = chance(0.2) ? `/${pick(SUBRESOURCES)}` : '';
      path = collection ? c.path : `${c.path}/${name()}${sub}`;
      if (chance(0.05)) path = path.replace('/api/v1/', '/api/v1/watch/').replace(/^\/apis\/([^/]+)\/([^/]+)\//, '/apis/$1/$2/watch/');
      // Collection deletes of cluster-scoped types would reach what is kept; they carry a selector.
      if (method === 'DELETE' && collection && c.clusterScoped) path += '?labelSelector=fz%3D1';
      if (['POST', 'PUT', 'PATCH', 'OPTIONS', 'PROPFIND'].includes(method) || (method === 'DELETE' && chance(0.3))) {
        if (chance(0.5)) {
          const object = validish(c.kind, c.apiVersion, name().replace(/%../g, ''));
          const value = chance(0.6) ? mistype(object) : object;
          const big = chance(0.03) ? { data: { big: 'x'.repeat(1024 * 1024 + 1) } } : {};
          body = { body: Buffer.from(JSON.stringify({ ...value, ...big })), contentType: pick(CONTENT_TYPES) };
        } else body = brokenBody();
      }
    }
    if (!path.includes('?')) path += query();
    if (body) headers['content-type'] = body.contentType;
    return { method, path, body: body?.body, headers };
  };
}

test('thousands of fuzzed requests: Status answers, no 5xx, the server stays up, kept objects unchanged', { timeout: 120_000 }, async () => {
  // What is stored before the run, and must be exactly the same after it.
  await api.kubectlOk(['create', 'namespace', 'keep']);
  await api.kubectlOk(['apply', '-f', '-'], readFileSync(new URL('./fixtures/widgets-crd.yaml', import.meta.url), 'utf8'));
  await api.kubectlOk(['wait', '--for=condition=established', 'crd/widgets.example.com']);
  await api.kubectlOk(['create', 'namespace', 'fz']);
  await api.kubectlOk(['create', 'configmap', 'kept', '-n', 'keep', '--from-literal=k=v']);
  await api.kubectlOk(['create', 'secret', 'generic', 'kept', '-n', 'keep', '--from-literal=password=s3cr3t']);
  await api.kubectlOk(['create', 'deployment', 'kept', '-n', 'keep', '--image=busybox', '--replicas=2']);
  await api.kubectlOk(['apply', '-f', '-'], 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: kept, namespace: keep}\nspec: {size: 3, replicas: 1}\n');
  const kept = [
    '/api/v1/namespaces/keep/configmaps/kept', '/api/v1/namespaces/keep/secrets/kept', '/apis/apps/v1/namespaces/keep/deployments/kept',
    '/apis/example.com/v1/namespaces/keep/widgets/kept', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', '/api/v1/namespaces/keep',
  ];
  const before = await Promise.all(kept.map((p) => api.request('GET', p)));
  for (const [i, r] of before.entries()) assert.equal(r.status, 200, kept[i]);

  const next = generator(prng(SEED));
  const requests = Array.from({ length: REQUESTS }, () => next(kept));
  const counts = new Map<number, number>();
  const problems: string[] = [];
  let index = 0;
  const worker = async () => {
    while (index < requests.length) {
      const { method, path, body, headers } = requests[index++];
      const what = `${method} ${path.slice(0, 160)} (${headers['content-type'] ?? 'no body'}, ${body?.length ?? 0} bytes)`;
      const answer = await send(method, path, body, headers);
      counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
      // A read at a resourceVersion the server has not reached (the fuzzer's 99999999999) is answered
      // 504 ResourceVersionTooLarge after the wait, as kube-apiserver answers it: not a failure.
      const tooLarge = answer.status === 504 && (method === 'HEAD' ? /[?&]resourceVersion=\d/.test(path) : answer.text.includes('"ResourceVersionTooLarge"'));
      if (answer.status >= 500 && !tooLarge) problems.push(`${what} → ${answer.status} ${answer.text.slice(0, 300)}`);
      if (answer.status < 400 || method === 'HEAD') continue;
      let status: any;
      try {
        status = JSON.parse(answer.text);
      } catch {
        problems.push(`${what} → ${answer.status} with a body that is not JSON: ${answer.text.slice(0, 200)}`);
        continue;
      }
      if (answer.contentType !== 'application/json' || status.kind !== 'Status' || status.apiVersion !== 'v1' || status.status !== 'Failure'
        || status.code !== answer.status || typeof status.message !== 'string' || status.message === '' || typeof status.reason !== 'string') {
        problems.push(`${what} → ${answer.status} ${answer.contentType}: not a Status: ${answer.text.slice(0, 300)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));

  assert.deepEqual(problems, [], `${problems.length} bad answers; statuses ${JSON.stringify([...counts])}`);
  // The run reached the handlers, not only the decoders.
  for (const code of [200, 201, 400, 404, 405, 413, 415, 422]) assert.ok(counts.get(code), `some requests got ${code}: ${JSON.stringify([...counts])}`);
  assert.equal((await api.request('GET', '/healthz', { token: null })).text, 'ok');
  const after = await Promise.all(kept.map((p) => api.request('GET', p)));
  for (const [i, r] of after.entries()) assert.deepEqual(r.json, before[i].json, `${kept[i]} is unchanged`);
  assert.ok((await api.kubectlOk(['get', 'widgets', '-n', 'keep'])).includes('kept'), 'kubectl still works');
});
