// Aggregated discovery (apidiscovery.k8s.io v2 and v2beta1): `/api` and `/apis` answer every
// group, version and resource in two documents that say the same as the legacy documents, one
// request per group-version; a CRD shows at once; the Accept header's order decides the format;
// and the real kubectl discovers with two requests.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregatedDiscoveryVersion } from '../../src/apiserver/handlers/discovery.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

// What kubectl 1.30+ sends (client-go's discovery); 1.27–1.29 ask for v2beta1 the same way.
const KUBECTL_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gadgets.example.com' },
    spec: {
      group: 'example.com', scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: ['gd'], categories: ['all'] },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } },
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      ],
    },
  }));
  await api.kubectlOk(['wait', '--for=condition=Established', 'crd/gadgets.example.com', '--timeout=20s']);
});
after(async () => {
  await api.stop();
});

/** The legacy documents of every group-version, as the aggregated resources (subresources under their resource) should say them. */
async function legacyView(): Promise<Map<string, unknown>> {
  const view = new Map<string, unknown>();
  const groupVersions = ['v1', ...(await api.request('GET', '/apis')).json.groups.flatMap((g: any) => g.versions.map((v: any) => v.groupVersion))];
  for (const gv of groupVersions) {
    const list = (await api.request('GET', gv === 'v1' ? '/api/v1' : `/apis/${gv}`)).json;
    const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv];
    const resources = list.resources.filter((r: any) => !r.name.includes('/')).map((r: any) => ({
      resource: r.name, kind: `${r.group ?? group}/${r.version ?? version}/${r.kind}`, namespaced: r.namespaced, verbs: r.verbs, shortNames: r.shortNames ?? [],
      subresources: list.resources.filter((s: any) => s.name.startsWith(`${r.name}/`)).map((s: any) => `${s.name.split('/')[1]}:${s.group ?? group}/${s.version ?? version}/${s.kind}:${s.verbs.join(',')}`),
    }));
    view.set(gv, resources);
  }
  return view;
}

async function aggregatedView(accept: string): Promise<{ view: Map<string, unknown>; contentType: unknown; preferred: Map<string, string> }> {
  const view = new Map<string, unknown>();
  const preferred = new Map<string, string>();
  let contentType: unknown;
  for (const path of ['/api', '/apis']) {
    const answer = await api.request('GET', path, { accept });
    assert.equal(answer.status, 200, answer.text);
    contentType = answer.headers['content-type'];
    for (const group of answer.json.items) {
      const name = group.metadata.name ?? '';
      preferred.set(name, group.versions[0].version);
      for (const version of group.versions) {
        assert.equal(version.freshness, 'Current', `${name}/${version.version}`);
        view.set(name ? `${name}/${version.version}` : version.version, version.resources.map((r: any) => ({
          resource: r.resource, kind: `${r.responseKind.group}/${r.responseKind.version}/${r.responseKind.kind}`, namespaced: r.scope === 'Namespaced', verbs: r.verbs, shortNames: r.shortNames ?? [],
          subresources: (r.subresources ?? []).map((s: any) => `${s.subresource}:${s.responseKind.group}/${s.responseKind.version}/${s.responseKind.kind}:${s.verbs.join(',')}`),
        })));
      }
    }
  }
  return { view, contentType, preferred };
}

test('the aggregated documents say what the legacy ones say, group-version by group-version, with a CRD among them', async () => {
  const legacy = await legacyView();
  for (const version of ['v2', 'v2beta1']) {
    const { view, contentType, preferred } = await aggregatedView(`application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList,application/json`);
    assert.equal(contentType, `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`);
    assert.deepEqual([...view.keys()].sort(), [...legacy.keys()].sort());
    for (const [gv, resources] of legacy) assert.deepEqual(view.get(gv), resources, gv);
    assert.equal(preferred.get('example.com'), 'v1', 'the preferred version first');
  }
  const { view } = await aggregatedView(KUBECTL_ACCEPT);
  const gadgets = (view.get('example.com/v1') as any[]).find((r) => r.resource === 'gadgets');
  assert.deepEqual(gadgets.subresources, ['status:example.com/v1/Gadget:get,patch,update', 'scale:autoscaling/v1/Scale:get,patch,update']);
  assert.deepEqual(gadgets.shortNames, ['gd']);
});

test('the Accept header decides: legacy first, or no aggregated clause, is the legacy document', async () => {
  assert.equal((await api.request('GET', '/apis', { accept: 'application/json' })).json.kind, 'APIGroupList');
  assert.equal((await api.request('GET', '/api')).json.kind, 'APIVersions');
  assert.equal((await api.request('GET', '/apis', { accept: 'application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).json.kind, 'APIGroupList');
  assert.equal((await api.request('GET', '/apis', { accept: 'application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).json.kind, 'APIGroupDiscoveryList');
  assert.equal((await api.request('GET', '/apis/example.com', { accept: KUBECTL_ACCEPT })).json.kind, 'APIGroup', 'only /api and /apis are aggregated');
  assert.equal(aggregatedDiscoveryVersion('application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json'), undefined, 'a version that does not exist');
  assert.equal(aggregatedDiscoveryVersion('application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io;profile=nopeer'), 'v2', 'parameters in any order');
});

test('the real kubectl discovers with /api and /apis alone, and finds the CRD by its short name', async () => {
  const run = await api.kubectl(['get', 'gd', '-A', '-v=6', '--cache-dir', `${api.dataDir}/kubectl-cache`]);
  assert.equal(run.code, 0, run.stderr);
  const requests = [...run.stderr.matchAll(/(?:GET (https:\/\/\S+)|url="([^"]+)")/g)].map((m) => new URL(m[1] ?? m[2]).pathname);
  assert.deepEqual(requests, ['/api', '/apis', '/apis/example.com/v1/gadgets'], run.stderr);
});
