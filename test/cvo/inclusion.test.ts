// Inclusion rules (profile, capabilities, feature sets, overrides) and the apply-mode annotations.
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
