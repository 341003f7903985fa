// The machine-config CRDs of release-payload/manifests/: structural, and real OpenShift
// MachineConfig, MachineConfigPool and KubeletConfig objects load into them unchanged (nothing
// pruned, nothing invalid); `kubectl get mc` / `mcp` columns are OpenShift's.
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
import { validateConfig } from '../../src/ignition/validate.js';

const manifestsDir = join(repositoryRoot, 'release-payload/manifests');
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const crdFiles = readdirSync(manifestsDir).filter((f) => f.startsWith('0000_80_machine-config_') && f.endsWith('.crd.yaml'));
const crds = Object.fromEntries(crdFiles.map((f) => {
  const crd = parseYaml(readFileSync(join(manifestsDir, f), 'utf8'));
  return [crd.spec.names.kind as string, crd];
}));
const schemaOf = (kind: string) => crds[kind].spec.versions[0].schema.openAPIV3Schema;
const docs = (file: string) => parseAllDocuments(readFileSync(join(fixtures, file), 'utf8')).map((d) => d.toJS());

/** Fields the schema would prune, then validation causes (metadata is the API server's own). */
function loadProblems(kind: string, obj: any): string[] {
  const { metadata: _metadata, ...body } = obj;
  const problems: string[] = [];
  try { assert.deepEqual(prune(schemaOf(kind), structuredClone(body)), body); } catch (err) { problems.push(`fields pruned: ${(err as Error).message}`); }
  return [...problems, ...validate(schemaOf(kind), obj).map((c) => `${c.field}: ${c.message}`)];
}

test('the four machine-config CRDs: structural, cluster-scoped, OpenShift names, in the HA profile', () => {
  assert.deepEqual(Object.keys(crds).sort(), ['ControllerConfig', 'KubeletConfig', 'MachineConfig', 'MachineConfigPool']);
  for (const crd of Object.values(crds) as any[]) {
    assert.equal(crd.spec.group, 'machineconfiguration.openshift.io');
    assert.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`);
    assert.equal(crd.spec.scope, 'Cluster');
    assert.equal(crd.metadata.annotations['include.release.openshift.io/self-managed-high-availability'], 'true');
    assert.deepEqual(structuralProblems(crd.spec.versions[0].schema.openAPIV3Schema), [], crd.metadata.name);
  }
  assert.deepEqual(crds.MachineConfig.spec.names.shortNames, ['mc']);
  assert.deepEqual(crds.MachineConfigPool.spec.names.shortNames, ['mcp']);
  assert.equal(crds.ControllerConfig.spec.names.shortNames, undefined);
});

test('real OpenShift MachineConfigs load unchanged, and their Ignition validates', () => {
  const mcs = docs('openshift-machineconfigs.yaml');
  assert.equal(mcs.length, 3);
  for (const mc of mcs) {
    assert.deepEqual(loadProblems('MachineConfig', mc), [], mc.metadata.name);
    assert.deepEqual(validateConfig(mc.spec.config), [], mc.metadata.name);
  }
});

test('real OpenShift MachineConfigPools and a KubeletConfig load unchanged', () => {
  for (const mcp of docs('openshift-machineconfigpools.yaml')) assert.deepEqual(loadProblems('MachineConfigPool', mcp), [], mcp.metadata.name);
  for (const kc of docs('openshift-kubeletconfig.yaml')) assert.deepEqual(loadProblems('KubeletConfig', kc), []);
});

test('schemas reject what OpenShift rejects', () => {
  const bad = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', metadata: { name: 'x' }, spec: { maxUnavailable: true, paused: 'yes' } };
  const fields = validate(schemaOf('MachineConfigPool'), bad).map((c) => c.field);
  assert.ok(fields.includes('spec.maxUnavailable') && fields.includes('spec.paused'), fields.join(','));
  const mc = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: 'x' }, spec: { kernelArguments: 'nosmt' } };
  assert.ok(validate(schemaOf('MachineConfig'), mc).some((c) => c.field === 'spec.kernelArguments'));
});

test('kubectl get mc / mcp columns are OpenShift\'s', () => {
  const now = Date.parse('2024-01-25T10:00:00Z');
  const mc = crdTable(crds.MachineConfig.spec.versions[0].additionalPrinterColumns, [docs('openshift-machineconfigs.yaml')[2]], { now });
  assert.deepEqual(mc.columnDefinitions.map((c) => c.name.toUpperCase()), ['NAME', 'GENERATEDBYCONTROLLER', 'IGNITIONVERSION', 'AGE']);
  assert.deepEqual([mc.rows[0].cells[0], ...mc.rows[0].cells.slice(2)], ['rendered-worker-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d', '3.4.0', '5d']);
  const mcp = crdTable(crds.MachineConfigPool.spec.versions[0].additionalPrinterColumns, [docs('openshift-machineconfigpools.yaml')[0]], { now });
  assert.deepEqual(mcp.columnDefinitions.map((c) => c.name.toUpperCase()), ['NAME', 'CONFIG', 'UPDATED', 'UPDATING', 'DEGRADED', 'MACHINECOUNT', 'READYMACHINECOUNT', 'UPDATEDMACHINECOUNT', 'DEGRADEDMACHINECOUNT', 'AGE']);
  assert.deepEqual(mcp.rows[0].cells, ['worker', 'rendered-worker-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d', 'True', 'False', 'False', 3, 3, 3, 0, '5d']);
});

// OpenShift's GENERATEDBYCONTROLLER column is `.metadata.annotations.machineconfiguration\.openshift\.io/…`;
// the API server's JSONPath keeps an escaped dot inside the field name.
test('kubectl get mc shows the generating controller version (escaped dots in JSONPath)', () => {
  const mc = crdTable(crds.MachineConfig.spec.versions[0].additionalPrinterColumns, [docs('openshift-machineconfigs.yaml')[2]], {});
  assert.equal(mc.rows[0].cells[1], '4c3c9f9d5d6c3b1e2a5f0a8d3e7c1b2a4f6e8d0c');
});
