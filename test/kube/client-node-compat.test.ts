// CRDs survive client-node's typed serialisation: applied through KubernetesObjectApi, the stored
// schema keeps x-kubernetes-* extensions, defaults and enums; a property named `default` stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startTestApiServer } from '../helpers/apiserver.js';
import { forClient, fromClient } from '../../src/kube/client-node-compat.js';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'things.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Cluster',
    names: { plural: 'things', kind: 'Thing' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  size: { 'x-kubernetes-int-or-string': true },
                  mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
                  default: { type: 'string' },
                  config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        },
      },
    ],
  },
};

test('a CRD applied through client-node keeps its schema', async () => {
  assert.deepEqual(fromClient(forClient(crd) as Record<string, any>), crd, 'the renaming round-trips');
  const api = await startTestApiServer();
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(api.kubeconfigPath);
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    await objects.create(forClient(crd));
    const stored = (await api.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.example.com')).json;
    assert.deepEqual(stored.spec.versions[0].schema.openAPIV3Schema, crd.spec.versions[0].schema.openAPIV3Schema);
    const read = fromClient((await objects.read({ apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name: crd.metadata.name } })) as Record<string, any>);
    assert.deepEqual(read.spec.versions[0].schema.openAPIV3Schema, crd.spec.versions[0].schema.openAPIV3Schema);
  } finally {
    await api.stop();
  }
});
