// The feature gates a payload's manifests are filtered against (release.openshift.io/feature-gate),
// read from FeatureGate/cluster as OpenShift's CVO reads them: status.featureGates holds, per
// release version, the gates the cluster enables at that version (written by the cluster's
// config operator). Also the payload's major version, for release.openshift.io/major-version. Pure.

import type * as api from '../../api/index.js';

/**
 * The gates enabled for `version`: the status entry for that version; before any operator has
 * written one, a CustomNoUpgrade cluster's spec.customNoUpgrade.enabled (minus its disabled
 * list), which is the only feature set whose gates the object itself names; otherwise none, as
 * OpenShift's CVO does when it finds no entry for the version.
 */
export function enabledFeatureGates(featureGate: api.FeatureGate | undefined, version: string): Set<string> {
  const entry = (featureGate?.status?.featureGates ?? []).find((g) => g?.version === version);
  if (entry) return new Set((entry.enabled ?? []).map((g) => String(g?.name ?? '')).filter((n) => n !== ''));
  if (featureGate?.spec?.featureSet === 'CustomNoUpgrade') {
    const custom = featureGate.spec.customNoUpgrade ?? {};
    const disabled = new Set<string>((custom.disabled ?? []).map(String));
    return new Set<string>((custom.enabled ?? []).map(String).filter((n: string) => !disabled.has(n)));
  }
  return new Set();
}

/** The major version of a release version ("5.0.0-xyz" → 5); undefined when it has none. */
export function majorVersionOf(version: string): number | undefined {
  const match = /^v?(\d+)(\.|$|-|\+)/.exec(version.trim());
  return match ? Number(match[1]) : undefined;
}
