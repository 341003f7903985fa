// The strategic merge patches the real kubectl apply computes (three-way, with $setElementOrder,
// $patch: delete and $retainKeys) applied by the embedded API server: a Deployment taken through
// image, env, port, container, volume and strategy changes, with a change made by someone else
// (not in last-applied) surviving the applies.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await api.kubectl(args, { input });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

type Obj = Record<string, any>;

function manifest(pod: Obj, strategy: Obj): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'shop', namespace: 'default' },
    spec: { replicas: 1, selector: { matchLabels: { app: 'shop' } }, strategy, template: { metadata: { labels: { app: 'shop' } }, spec: pod } },
  });
}

async function podSpec(): Promise<Obj> {
  return JSON.parse(await kubectl(['get', 'deployment', 'shop', '-o', 'json']));
}

test('kubectl apply sequences come out as kube-apiserver would leave them', async () => {
  const v1 = {
    containers: [
      { name: 'app', image: 'shop:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80, name: 'http' }], volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] },
      { name: 'proxy', image: 'proxy:1', args: ['--a', '--b'] },
    ],
    volumes: [{ name: 'cfg', configMap: { name: 'shop-config' } }],
    tolerations: [{ key: 'x', operator: 'Exists' }],
  };
  assert.match(await kubectl(['apply', '-f', '-'], manifest(v1, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } })), /created/);

  // Someone else adds an env var to app; apply must leave it alone (it is not in last-applied).
  await kubectl(['patch', 'deployment', 'shop', '--type', 'json', '-p', '[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"EXTRA","value":"x"}}]']);

  // v2: new image, B removed and C added, a second port, proxy args replaced, volume switched from
  // a ConfigMap to a Secret (volumes retain keys), strategy Recreate (strategy retains keys).
  const v2 = {
    containers: [
      { name: 'app', image: 'shop:2', env: [{ name: 'A', value: '1' }, { name: 'C', value: '3' }], ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443, name: 'https' }], volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] },
      { name: 'proxy', image: 'proxy:1', args: ['--c'] },
    ],
    volumes: [{ name: 'cfg', secret: { secretName: 'shop-secret' } }],
    tolerations: [{ key: 'y', operator: 'Exists' }],
  };
  assert.match(await kubectl(['apply', '-f', '-'], manifest(v2, { type: 'Recreate' })), /configured/);
  let d = await podSpec();
  let spec = d.spec.template.spec;
  assert.deepEqual(spec.containers.map((c: Obj) => c.name), ['app', 'proxy']);
  assert.equal(spec.containers[0].image, 'shop:2');
  assert.deepEqual(spec.containers[0].env, [{ name: 'A', value: '1' }, { name: 'C', value: '3' }, { name: 'EXTRA', value: 'x' }]);
  assert.deepEqual(spec.containers[0].ports.map((p: Obj) => p.containerPort), [80, 443]);
  assert.deepEqual(spec.containers[1].args, ['--c']);
  assert.deepEqual(spec.volumes, [{ name: 'cfg', secret: { secretName: 'shop-secret', defaultMode: 420 } }], 'with the file mode kube defaults');
  assert.deepEqual(spec.tolerations, [{ key: 'y', operator: 'Exists' }]);
  assert.deepEqual(d.spec.strategy, { type: 'Recreate' });

  // v3: a sidecar inserted before app, proxy removed, port 80 dropped, the mount moved.
  const v3 = {
    containers: [
      { name: 'log', image: 'log:1' },
      { name: 'app', image: 'shop:2', env: [{ name: 'A', value: '1' }, { name: 'C', value: '3' }], ports: [{ containerPort: 443, name: 'https' }], volumeMounts: [{ name: 'cfg', mountPath: '/srv/cfg' }] },
    ],
    volumes: [{ name: 'cfg', secret: { secretName: 'shop-secret' } }],
    tolerations: [{ key: 'y', operator: 'Exists' }],
  };
  assert.match(await kubectl(['apply', '-f', '-'], manifest(v3, { type: 'Recreate' })), /configured/);
  d = await podSpec();
  spec = d.spec.template.spec;
  assert.deepEqual(spec.containers.map((c: Obj) => c.name), ['log', 'app']);
  assert.deepEqual(spec.containers[1].ports, [{ containerPort: 443, name: 'https', protocol: 'TCP' }]);
  assert.deepEqual(spec.containers[1].volumeMounts, [{ name: 'cfg', mountPath: '/srv/cfg' }]);
  assert.deepEqual(spec.containers[1].env.map((e: Obj) => e.name), ['A', 'C', 'EXTRA']);

  // Applying the same manifest again changes nothing. kubectl still sends a patch (only
  // $setElementOrder/env, because of EXTRA), so it says "configured"; kube-apiserver treats the
  // no-op patch as no write at all.
  await kubectl(['apply', '-f', '-'], manifest(v3, { type: 'Recreate' }));
  const again = await podSpec();
  assert.deepEqual(again.spec, d.spec);
  assert.equal(again.metadata.generation, d.metadata.generation);
  assert.equal(again.metadata.resourceVersion, d.metadata.resourceVersion, 'a no-op patch is not a write');

  // Back to a rolling update: the RollingUpdate fields return and the type changes (what the
  // manifest does not say, maxUnavailable, defaulted as kube-apiserver defaults it).
  assert.match(await kubectl(['apply', '-f', '-'], manifest(v3, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } })), /configured/);
  d = await podSpec();
  assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: '25%' } });
});
