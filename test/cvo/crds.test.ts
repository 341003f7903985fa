// The CRDs of manifests/: structurally sound (no $ref, every level typed), and real OpenShift
// ClusterVersion and ClusterOperator objects load into them unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { repositoryRoot } from '../../src/cli/release.js';
import { validateAgainstSchema } from './structural-schema.js';

const manifestsDir = join(repositoryRoot, 'manifests');
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const schemaOf = (file: string) => parseYaml(readFileSync(join(manifestsDir, file), 'utf8')).spec.versions[0].schema.openAPIV3Schema;
const clusterVersionSchema = schemaOf('0000_00_cluster-version-operator_01_clusterversions.crd.yaml');
const clusterOperatorSchema = schemaOf('0000_00_cluster-version-operator_01_clusteroperators.crd.yaml');

function structuralProblems(schema: any, path: string): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const problems: string[] = [];
  if ('$ref' in schema) problems.push(`${path}: $ref is not allowed in a CRD schema`);
  if (!schema.type && !schema['x-kubernetes-preserve-unknown-fields'] && !schema['x-kubernetes-int-or-string']) problems.push(`${path}: no type`);
  for (const [k, v] of Object.entries(schema.properties ?? {})) problems.push(...structuralProblems(v, `${path}.${k}`));
  if (schema.items) problems.push(...structuralProblems(schema.items, `${path}[]`));
  return problems;
}

test('every CRD in manifests/ is structural and has a status subresource', () => {
  const crds = readdirSync(manifestsDir).filter((f) => f.endsWith('.crd.yaml'));
  assert.ok(crds.length >= 6);
  for (const file of crds) {
    const crd = parseYaml(readFileSync(join(manifestsDir, file), 'utf8'));
    assert.equal(crd.spec.group, 'config.openshift.io', file);
    assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`, file);
    assert.deepEqual(crd.spec.versions[0].subresources, { status: {} }, file);
    assert.deepEqual(structuralProblems(crd.spec.versions[0].schema.openAPIV3Schema, file), []);
  }
});

test('a real OpenShift 4.14 ClusterVersion validates unchanged', () => {
  const cv = parseYaml(readFileSync(join(fixtures, 'clusterversion-4.14.yaml'), 'utf8'));
  assert.deepEqual(validateAgainstSchema(cv, clusterVersionSchema), []);
});

test('real ClusterOperators (payload manifest and live object) validate unchanged', () => {
  const docs = parseAllDocuments(readFileSync(join(fixtures, 'clusteroperators.yaml'), 'utf8')).map((d) => d.toJS());
  assert.equal(docs.length, 2);
  for (const co of docs) assert.deepEqual(validateAgainstSchema(co, clusterOperatorSchema), []);
});

test('the schemas reject what OpenShift rejects', () => {
  const base = parseYaml(readFileSync(join(fixtures, 'clusterversion-4.14.yaml'), 'utf8'));
  const noClusterID = structuredClone(base);
  delete noClusterID.spec.clusterID;
  assert.deepEqual(validateAgainstSchema(noClusterID, clusterVersionSchema), ['.spec: clusterID is required']);
  const badBaseline = structuredClone(base);
  badBaseline.spec.capabilities.baselineCapabilitySet = 'v3.11';
  assert.match(validateAgainstSchema(badBaseline, clusterVersionSchema).join(), /baselineCapabilitySet: "v3.11" is not one of/);
  const badRule = structuredClone(base);
  badRule.status.conditionalUpdates[0].risks[0].matchingRules[0].type = 'Sometimes';
  assert.match(validateAgainstSchema(badRule, clusterVersionSchema).join(), /matchingRules\[0\]\.type/);
  assert.deepEqual(validateAgainstSchema({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'x' } }, clusterOperatorSchema), ['<root>: spec is required']);
  assert.match(validateAgainstSchema({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'x' }, spec: {}, status: { versions: [{ name: 'operator' }] } }, clusterOperatorSchema).join(), /version is required/);
});
