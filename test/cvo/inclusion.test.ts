// Inclusion rules (profile, capabilities, feature sets, feature gates, major version, overrides)
// and the apply-mode annotations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enabledCapabilities, knownCapabilities } from '../../src/cvo/payload/capabilities.js';
import { applyMode, filterManifests, includeManifest, type InclusionOptions } from '../../src/cvo/payload/inclusion.js';
import { manifest } from './helpers.js';

const ha = { 'include.release.openshift.io/self-managed-high-availability': 'true' };
const withAnnotations = (annotations: Record<string, string>, kind = 'ConfigMap', name = 'x', namespace?: string) =>
  manifest('0000_50_x_y.yaml', kind, name, { metadata: { name, ...(namespace && { namespace }), annotations } });
const known = new Set(knownCapabilities);

const cases: { name: string; annotations: Record<string, string>; options?: InclusionOptions; want: true | RegExp }[] = [
  { name: 'default profile included', annotations: ha, want: true },
  { name: 'no profile annotation: excluded', annotations: {}, want: /not included in the cluster profile self-managed-high-availability/ },
  { name: 'profile annotation not "true": excluded', annotations: { 'include.release.openshift.io/self-managed-high-availability': 'false' }, want: /not included/ },
  { name: 'another profile asked for', annotations: ha, options: { profile: 'single-node-developer' }, want: /single-node-developer/ },
  { name: 'capability enabled', annotations: { ...ha, 'capability.openshift.io/name': 'Console' }, options: { enabledCapabilities: enabledCapabilities(undefined), knownCapabilities: known }, want: true },
  {
    name: 'one of several capabilities disabled',
    annotations: { ...ha, 'capability.openshift.io/name': 'Console+Insights' },
    options: { enabledCapabilities: enabledCapabilities({ baselineCapabilitySet: 'None', additionalEnabledCapabilities: ['Console'] }), knownCapabilities: known },
    want: /disabled capabilities: Insights/,
  },
  { name: 'unknown capability', annotations: { ...ha, 'capability.openshift.io/name': 'Teleporter' }, options: { enabledCapabilities: new Set(['Teleporter']), knownCapabilities: known }, want: /unrecognized capability names: Teleporter/ },
  {
    name: 'baseline v4.11 lacks Console',
    annotations: { ...ha, 'capability.openshift.io/name': 'Console' },
    options: { enabledCapabilities: enabledCapabilities({ baselineCapabilitySet: 'v4.11' }), knownCapabilities: known },
    want: /disabled capabilities: Console/,
  },
  { name: 'feature set listed', annotations: { ...ha, 'release.openshift.io/feature-set': 'TechPreviewNoUpgrade,CustomNoUpgrade' }, options: { featureSet: 'TechPreviewNoUpgrade' }, want: true },
  { name: 'default feature set vs TechPreview-only manifest', annotations: { ...ha, 'release.openshift.io/feature-set': 'TechPreviewNoUpgrade' }, options: { featureSet: '' }, want: /feature set Default/ },
  { name: 'default feature set, manifest for Default', annotations: { ...ha, 'release.openshift.io/feature-set': 'Default' }, options: { featureSet: '' }, want: true },
  { name: 'no feature-set annotation: every feature set', annotations: ha, options: { featureSet: 'DevPreviewNoUpgrade' }, want: true },
  {
    name: 'overridden unmanaged',
    annotations: ha,
    options: { overrides: [{ kind: 'ConfigMap', group: '', namespace: '', name: 'x', unmanaged: true }] },
    want: /overridden as unmanaged/,
  },
  { name: 'feature gate enabled', annotations: { ...ha, 'release.openshift.io/feature-gate': 'Alpha' }, options: { enabledFeatureGates: new Set(['Alpha']) }, want: true },
  { name: 'feature gate not enabled', annotations: { ...ha, 'release.openshift.io/feature-gate': 'Alpha' }, options: { enabledFeatureGates: new Set() }, want: /feature gate Alpha is not enabled/ },
  { name: 'negated gate, gate off', annotations: { ...ha, 'release.openshift.io/feature-gate': '-Legacy' }, options: { enabledFeatureGates: new Set(['Alpha']) }, want: true },
  { name: 'negated gate, gate on', annotations: { ...ha, 'release.openshift.io/feature-gate': '-Legacy' }, options: { enabledFeatureGates: new Set(['Legacy']) }, want: /feature gate Legacy is enabled, and the manifest requires it disabled/ },
  { name: 'gate list: every entry must hold', annotations: { ...ha, 'release.openshift.io/feature-gate': 'Alpha, -Legacy' }, options: { enabledFeatureGates: new Set(['Alpha', 'Legacy']) }, want: /Legacy is enabled/ },
  { name: 'gate list: all hold', annotations: { ...ha, 'release.openshift.io/feature-gate': 'Alpha,-Legacy,' }, options: { enabledFeatureGates: new Set(['Alpha']) }, want: true },
  { name: 'gates not known: gate annotation not checked', annotations: { ...ha, 'release.openshift.io/feature-gate': 'Alpha' }, want: true },
  {
    name: 'feature set and feature gate together',
    annotations: { ...ha, 'release.openshift.io/feature-gate': 'Alpha', 'release.openshift.io/feature-set': 'Default' },
    options: { featureSet: '', enabledFeatureGates: new Set(['Alpha']) },
    want: /a manifest names a feature set or feature gates, not both/,
  },
  { name: 'major version on a ConfigMap', annotations: { ...ha, 'release.openshift.io/major-version': '4' }, options: { majorVersion: 4 }, want: /only supported on FeatureGates and CustomResourceDefinitions, not on a ConfigMap/ },
  {
    name: 'override for another object does not apply',
    annotations: ha,
    options: { overrides: [{ kind: 'ConfigMap', group: '', namespace: 'other', name: 'x', unmanaged: true }] },
    want: true,
  },
];

for (const c of cases) {
  test(`inclusion — ${c.name}`, () => {
    const r = includeManifest(withAnnotations(c.annotations), c.options);
    if (c.want === true) assert.deepEqual(r, { included: true });
    else {
      assert.equal(r.included, false);
      assert.match((r as { reason: string }).reason, c.want);
    }
  });
}

const crd = (majorVersion: string) => ({
  file: '0000_50_x_crd.yaml',
  document: 0,
  gvk: { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' },
  object: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'xs.example.com', annotations: { ...ha, 'release.openshift.io/major-version': majorVersion } } },
});
const majorCases: { value: string; major: number; want: true | RegExp }[] = [
  { value: '4', major: 4, want: true },
  { value: '4', major: 5, want: /major version 5 is not one of release.openshift.io\/major-version: 4/ },
  { value: '4,5', major: 5, want: true },
  { value: ' 4 , 5 ', major: 4, want: true },
  { value: '4,5', major: 3, want: /not one of/ },
  { value: '-3', major: 5, want: true },
  { value: '-3', major: 3, want: /major version 3 is excluded/ },
  { value: '-3,-4', major: 4, want: /major version 4 is excluded/ },
  { value: '5,-3', major: 4, want: /not one of/ },
  { value: '4,-4', major: 5, want: /both includes and excludes 4/ },
  { value: 'four', major: 4, want: /invalid included major version "four"/ },
  { value: '-x', major: 4, want: /invalid excluded major version "x"/ },
  { value: '', major: 4, want: true },
];
for (const c of majorCases) {
  test(`major version — ${JSON.stringify(c.value)} in a payload of major ${c.major}`, () => {
    const r = includeManifest(crd(c.value), { majorVersion: c.major });
    if (c.want === true) assert.deepEqual(r, { included: true });
    else {
      assert.equal(r.included, false);
      assert.match((r as { reason: string }).reason, c.want);
    }
  });
}

test('apply mode annotations', () => {
  assert.deepEqual(applyMode(withAnnotations(ha)), { mode: 'apply' });
  assert.deepEqual(applyMode(withAnnotations({ 'release.openshift.io/delete': 'true' })), { mode: 'delete' });
  assert.deepEqual(applyMode(withAnnotations({ 'release.openshift.io/create-only': 'true' })), { mode: 'create-only' });
  assert.match((applyMode(withAnnotations({ 'release.openshift.io/delete': 'yes' })) as { error: string }).error, /must be "true"/);
  assert.match((applyMode(withAnnotations({ 'release.openshift.io/delete': 'true', 'release.openshift.io/create-only': 'true' })) as { error: string }).error, /cannot both/);
});

test('enabled capabilities: vCurrent by default, baseline plus additions, unknown baseline rejected', () => {
  assert.equal(enabledCapabilities(undefined).size, knownCapabilities.length);
  assert.deepEqual([...enabledCapabilities({ baselineCapabilitySet: 'None', additionalEnabledCapabilities: ['baremetal'] })], ['baremetal']);
  assert.ok(enabledCapabilities({ baselineCapabilitySet: 'v4.14' }).has('MachineAPI'));
  assert.ok(!enabledCapabilities({ baselineCapabilitySet: 'v4.13' }).has('MachineAPI'));
  assert.throws(() => enabledCapabilities({ baselineCapabilitySet: 'v9' }), /unknown baselineCapabilitySet "v9"/);
});

test('filterManifests keeps payload order and says why the others are out', () => {
  const a = withAnnotations(ha, 'ConfigMap', 'a');
  const b = withAnnotations({}, 'ConfigMap', 'b');
  const c = withAnnotations(ha, 'ConfigMap', 'c');
  const r = filterManifests([a, b, c]);
  assert.deepEqual(r.included, [a, c]);
  assert.equal(r.excluded.length, 1);
  assert.equal(r.excluded[0].manifest, b);
  assert.match(r.excluded[0].reason, /not included in the cluster profile/);
});
