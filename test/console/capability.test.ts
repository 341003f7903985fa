// The console is the optional capability `Console`, as OpenShift's is: every manifest of it in the
// payload carries `capability.openshift.io/name: Console`, so a cluster whose ClusterVersion leaves
// Console out of its capabilities gets none of them, and the default (vCurrent) gets all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repositoryRoot } from '../../src/cli/release.js';
import { readPayloadFiles } from '../../src/cvo/payload/payload.js';
import { parseManifestFile } from '../../src/cvo/payload/manifest.js';
import { filterManifests } from '../../src/cvo/payload/inclusion.js';
import { enabledCapabilities, knownCapabilities } from '../../src/cvo/payload/capabilities.js';

const payload = { manifests: readPayloadFiles(`${repositoryRoot}release-payload/manifests`).flatMap((f) => parseManifestFile(f.name, f.text).manifests) };
const consoleManifests = payload.manifests.filter((m) => m.file.startsWith('0000_50_console_'));
const names = (ms: typeof payload.manifests) => ms.map((m) => `${m.object.kind}/${m.object.metadata.name}`).sort();

test('every console manifest names the Console capability', () => {
  assert.deepEqual(names(consoleManifests), ['ClusterOperator/console', 'ClusterRole/console', 'ClusterRoleBinding/console', 'Deployment/console', 'Namespace/openshift-console', 'Service/console', 'ServiceAccount/console']);
  for (const m of consoleManifests) assert.equal(m.object.metadata.annotations?.['capability.openshift.io/name'], 'Console', `${m.file} ${m.object.kind}/${m.object.metadata.name}`);
});

test('Console left out of the capabilities: no console manifest is applied; vCurrent and v4.12 include them', () => {
  const known = new Set(knownCapabilities);
  const without = filterManifests(payload.manifests, { enabledCapabilities: enabledCapabilities({ baselineCapabilitySet: 'v4.11' }), knownCapabilities: known });
  assert.deepEqual(names(without.included.filter((m) => consoleManifests.includes(m))), []);
  for (const { manifest, reason } of without.excluded.filter((e) => consoleManifests.includes(e.manifest))) assert.equal(reason, 'disabled capabilities: Console', manifest.file);
  for (const baselineCapabilitySet of ['vCurrent', 'v4.12']) {
    const withConsole = filterManifests(payload.manifests, { enabledCapabilities: enabledCapabilities({ baselineCapabilitySet }), knownCapabilities: known });
    assert.deepEqual(names(withConsole.included.filter((m) => consoleManifests.includes(m))), names(consoleManifests), baselineCapabilitySet);
  }
  // Added back on its own to an otherwise minimal cluster.
  const added = filterManifests(payload.manifests, { enabledCapabilities: enabledCapabilities({ baselineCapabilitySet: 'None', additionalEnabledCapabilities: ['Console'] }), knownCapabilities: known });
  assert.deepEqual(names(added.included.filter((m) => consoleManifests.includes(m))), names(consoleManifests));
});
