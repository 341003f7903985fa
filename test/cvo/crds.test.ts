// The CRDs of manifests/: structural (checked by the embedded API server's own schema code),
// real OpenShift ClusterVersion and ClusterOperator objects load into them unchanged (nothing
// pruned, nothing invalid), and their printer columns show what `oc get` shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { prune, validate } from '../../src/apiserver/crds/schema.js';
import { structuralProblems } from '../../src/apiserver/crds/structural.js';
import { crdTable } from '../../src/apiserver/printing/tables.js';
import { repositoryRoot } from '../../src/cli/release.js';

const manifestsDir = join(repositoryRoot, 'manifests');
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const crdOf = (file: string) => parseYaml(readFileSync(join(manifestsDir, file), 'utf8'));
const clusterVersionCRD = crdOf('0000_00_cluster-version-operator_01_clusterversions.crd.yaml');
const clusterOperatorCRD = crdOf('0000_00_cluster-version-operator_01_clusteroperators.crd.yaml');
const schemaOf = (crd: any) => crd.spec.versions[0].schema.openAPIV3Schema;
const clusterVersion = () => parseYaml(readFileSync(join(fixtures, 'clusterversion-4.14.yaml'), 'utf8'));
const clusterOperators = () => parseAllDocuments(readFileSync(join(fixtures, 'clusteroperators.yaml'), 'utf8')).map((d) => d.toJS());

/**
 * Problems loading obj: fields the schema would prune, then validation causes. metadata is left
 * out of pruning because kube-apiserver handles ObjectMeta itself, whatever the CRD's schema says
 * of it (OpenShift's CRDs declare it as a bare `type: object`).
 */
function loadProblems(crd: any, obj: any): string[] {
  const { metadata: _metadata, ...body } = obj;
  const pruned = prune(schemaOf(crd), structuredClone(body));
  const problems: string[] = [];
  try {
    assert.deepEqual(pruned, body);
  } catch (err) {
    problems.push(`fields pruned: ${(err as Error).message}`);
  }
  return [...problems, ...validate(schemaOf(crd), obj).map((c) => `${c.field}: ${c.message}`)];
}

test('every CRD in manifests/ is structural, named for its plural, with a status subresource', () => {
  const files = readdirSync(manifestsDir).filter((f) => f.endsWith('.crd.yaml'));
  assert.ok(files.length >= 6);
  for (const file of files) {
    const crd = crdOf(file);
    assert.equal(crd.spec.group, 'config.openshift.io', file);
    assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`, file);
    assert.deepEqual(crd.spec.versions[0].subresources, { status: {} }, file);
    assert.deepEqual(structuralProblems(schemaOf(crd)), [], file);
  }
});

test('a real OpenShift 4.14 ClusterVersion loads unchanged', () => {
  assert.deepEqual(loadProblems(clusterVersionCRD, clusterVersion()), []);
});

test('real ClusterOperators (payload manifest and live object) load unchanged', () => {
  const docs = clusterOperators();
  assert.equal(docs.length, 2);
  for (const co of docs) assert.deepEqual(loadProblems(clusterOperatorCRD, co), []);
});

test('the schemas reject what OpenShift rejects', () => {
  const noClusterID = clusterVersion();
  delete noClusterID.spec.clusterID;
  assert.match(loadProblems(clusterVersionCRD, noClusterID).join('\n'), /spec\.clusterID/);
  const badBaseline = clusterVersion();
  badBaseline.spec.capabilities.baselineCapabilitySet = 'v3.11';
  assert.match(loadProblems(clusterVersionCRD, badBaseline).join('\n'), /baselineCapabilitySet/);
  const badRule = clusterVersion();
  badRule.status.conditionalUpdates[0].risks[0].matchingRules[0].type = 'Sometimes';
  assert.match(loadProblems(clusterVersionCRD, badRule).join('\n'), /matchingRules\[0\]\.type/);
  const unknownField = clusterVersion();
  unknownField.spec.channnel = 'typo';
  assert.match(loadProblems(clusterVersionCRD, unknownField).join('\n'), /fields pruned/);
  assert.match(loadProblems(clusterOperatorCRD, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'x' } }).join('\n'), /spec/);
  const noVersion = { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name: 'x' }, spec: {}, status: { versions: [{ name: 'operator' }] } };
  assert.match(loadProblems(clusterOperatorCRD, noVersion).join('\n'), /status\.versions\[0\]\.version/);
});

test('printer columns: kubectl get clusterversion and kubectl get co show what oc shows', () => {
  const now = Date.parse('2024-01-20T09:40:22Z');
  const cv = crdTable(clusterVersionCRD.spec.versions[0].additionalPrinterColumns, [clusterVersion()], { now });
  assert.deepEqual(cv.columnDefinitions.map((c) => c.name.toUpperCase()), ['NAME', 'VERSION', 'AVAILABLE', 'PROGRESSING', 'SINCE', 'STATUS']);
  assert.deepEqual(cv.rows[0].cells, ['version', '4.14.10', 'True', 'False', '5d', 'Cluster version is 4.14.10']);
  assert.deepEqual(clusterOperatorCRD.spec.names.shortNames, ['co']);
  const co = crdTable(clusterOperatorCRD.spec.versions[0].additionalPrinterColumns, [clusterOperators()[1]], { now });
  assert.deepEqual(co.columnDefinitions.map((c) => c.name.toUpperCase()), ['NAME', 'VERSION', 'AVAILABLE', 'PROGRESSING', 'DEGRADED', 'SINCE']);
  assert.deepEqual(co.rows[0].cells, ['dns', '4.14.10', 'True', 'False', 'False', '5d']);
});
