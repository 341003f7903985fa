// Which payload manifests a cluster gets, and how: the inclusion rules of OpenShift's
// library-go manifest.Include (feature set, feature gates, major version, profile,
// capabilities, overrides) and the apply mode annotations (release.openshift.io/delete,
// release.openshift.io/create-only). Pure.
import type { Manifest } from './manifest.js';

export const defaultProfile = 'self-managed-high-availability';
export const profileAnnotationPrefix = 'include.release.openshift.io/';
export const capabilityAnnotation = 'capability.openshift.io/name';
export const featureSetAnnotation = 'release.openshift.io/feature-set';
export const featureGateAnnotation = 'release.openshift.io/feature-gate';
export const majorVersionAnnotation = 'release.openshift.io/major-version';
export const deleteAnnotation = 'release.openshift.io/delete';
export const createOnlyAnnotation = 'release.openshift.io/create-only';

/** An entry of ClusterVersion spec.overrides. */
export interface ComponentOverride {
  kind: string;
  group: string;
  namespace?: string;
  name: string;
  unmanaged: boolean;
}

export interface InclusionOptions {
  /** Cluster profile; defaults to self-managed-high-availability. */
  profile?: string;
  /** Enabled capabilities; undefined skips the capability check (as the CVO does before it knows them). */
  enabledCapabilities?: ReadonlySet<string>;
  knownCapabilities?: ReadonlySet<string>;
  /** The cluster's feature set: "" or "Default" for the default, TechPreviewNoUpgrade, …; undefined skips the check. */
  featureSet?: string;
  /** The feature gates enabled on the cluster (see feature-gates.ts); undefined skips the check. */
  enabledFeatureGates?: ReadonlySet<string>;
  /** The payload's major version (5 for 5.0.0); undefined skips the check. */
  majorVersion?: number;
  overrides?: ComponentOverride[];
}

export type Inclusion = { included: true } | { included: false; reason: string };

function annotations(m: Manifest): Record<string, string> {
  return m.object.metadata.annotations ?? {};
}

/** Whether manifest m is part of the cluster under the given options, and if not, why not. */
export function includeManifest(m: Manifest, options: InclusionOptions = {}): Inclusion {
  const a = annotations(m);
  const profile = options.profile ?? defaultProfile;
  if (a[profileAnnotationPrefix + profile] !== 'true') {
    return { included: false, reason: `not included in the cluster profile ${profile} (no ${profileAnnotationPrefix}${profile}: "true")` };
  }
  // A manifest says which feature set or which gates it belongs to, never both (library-go
  // refuses the pair only when it filters on both, and so do we).
  if (options.featureSet !== undefined && options.enabledFeatureGates && a[featureSetAnnotation] !== undefined && a[featureGateAnnotation] !== undefined) {
    return { included: false, reason: `both ${featureSetAnnotation} and ${featureGateAnnotation} are set: a manifest names a feature set or feature gates, not both` };
  }
  if (options.featureSet !== undefined && a[featureSetAnnotation] !== undefined) {
    const sets = a[featureSetAnnotation].split(',').map((s) => s.trim());
    const wanted = options.featureSet === '' ? 'Default' : options.featureSet;
    if (!sets.includes(wanted)) return { included: false, reason: `feature set ${wanted} is not one of ${a[featureSetAnnotation]}` };
  }
  if (options.enabledFeatureGates && a[featureGateAnnotation] !== undefined) {
    const problem = featureGateProblem(a[featureGateAnnotation], options.enabledFeatureGates);
    if (problem) return { included: false, reason: problem };
  }
  if (options.majorVersion !== undefined && a[majorVersionAnnotation] !== undefined) {
    const problem = majorVersionProblem(m, a[majorVersionAnnotation], options.majorVersion);
    if (problem) return { included: false, reason: problem };
  }
  if (options.enabledCapabilities && a[capabilityAnnotation] !== undefined) {
    const names = a[capabilityAnnotation].split('+').map((s) => s.trim()).filter((s) => s !== '');
    const unknown = options.knownCapabilities ? names.filter((c) => !options.knownCapabilities!.has(c)) : [];
    if (unknown.length > 0) return { included: false, reason: `unrecognized capability names: ${unknown.join(', ')}` };
    const disabled = names.filter((c) => !options.enabledCapabilities!.has(c));
    if (disabled.length > 0) return { included: false, reason: `disabled capabilities: ${disabled.join(', ')}` };
  }
  const override = findOverride(m, options.overrides);
  if (override?.unmanaged) return { included: false, reason: 'overridden as unmanaged in ClusterVersion spec.overrides' };
  return { included: true };
}

/**
 * Why a release.openshift.io/feature-gate value excludes the manifest, or undefined: a comma
 * list in which every entry must hold ("Gate": enabled; "-Gate": not enabled).
 */
export function featureGateProblem(value: string, enabled: ReadonlySet<string>): string | undefined {
  for (const entry of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (entry.startsWith('-')) {
      if (enabled.has(entry.slice(1))) return `feature gate ${entry.slice(1)} is enabled, and the manifest requires it disabled (${featureGateAnnotation}: ${value})`;
    } else if (!enabled.has(entry)) {
      return `feature gate ${entry} is not enabled (${featureGateAnnotation}: ${value})`;
    }
  }
  return undefined;
}

/**
 * Why a release.openshift.io/major-version value excludes the manifest from a payload of major
 * version `major`, or undefined. The value is a comma list of versions ("4,5") and negated ones
 * ("-3"): a listed version includes, a negated one excludes, and a list with positive entries
 * excludes every version it does not name. As in library-go, only FeatureGates and
 * CustomResourceDefinitions may carry it, and a malformed or self-contradicting value excludes.
 */
export function majorVersionProblem(m: Manifest, value: string, major: number): string | undefined {
  const isFeatureGate = m.gvk.group === 'config.openshift.io' && m.gvk.kind === 'FeatureGate';
  const isCrd = m.gvk.group === 'apiextensions.k8s.io' && m.gvk.kind === 'CustomResourceDefinition';
  if (!isFeatureGate && !isCrd) return `${majorVersionAnnotation} is only supported on FeatureGates and CustomResourceDefinitions, not on a ${m.gvk.kind}`;
  const included = new Set<number>();
  const excluded = new Set<number>();
  for (const entry of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const negated = entry.startsWith('-');
    const digits = negated ? entry.slice(1) : entry;
    if (!/^\d+$/.test(digits)) return `invalid ${negated ? 'excluded' : 'included'} major version ${JSON.stringify(digits)} in ${majorVersionAnnotation}: ${value}`;
    (negated ? excluded : included).add(Number(digits));
  }
  const both = [...included].filter((v) => excluded.has(v));
  if (both.length > 0) return `${majorVersionAnnotation}: ${value} both includes and excludes ${both.join(', ')}`;
  if (included.has(major)) return undefined;
  if (excluded.has(major)) return `major version ${major} is excluded (${majorVersionAnnotation}: ${value})`;
  if (included.size > 0) return `major version ${major} is not one of ${majorVersionAnnotation}: ${value}`;
  return undefined;
}

/** Splits manifests into those the cluster gets (order kept) and those it does not, with why. */
export function filterManifests(manifests: Manifest[], options: InclusionOptions = {}): { included: Manifest[]; excluded: { manifest: Manifest; reason: string }[] } {
  const included: Manifest[] = [];
  const excluded: { manifest: Manifest; reason: string }[] = [];
  for (const manifest of manifests) {
    const r = includeManifest(manifest, options);
    if (r.included) included.push(manifest);
    else excluded.push({ manifest, reason: r.reason });
  }
  return { included, excluded };
}

export function findOverride(m: Manifest, overrides: ComponentOverride[] | undefined): ComponentOverride | undefined {
  const { name, namespace } = m.object.metadata;
  return overrides?.find((o) => o.kind === m.gvk.kind && o.group === m.gvk.group && o.name === name && (o.namespace ?? '') === (namespace ?? ''));
}

export type ApplyMode = 'apply' | 'create-only' | 'delete';

/**
 * How the CVO treats an included manifest: apply (the default), create-only (create when
 * missing, never update) or delete (delete during an update, never create). Any value of the
 * two annotations other than "true" is an error, as in OpenShift, rather than silently ignored.
 */
export function applyMode(m: Manifest): { mode: ApplyMode } | { error: string } {
  const a = annotations(m);
  const del = a[deleteAnnotation];
  const createOnly = a[createOnlyAnnotation];
  if (del !== undefined && del !== 'true') return { error: `${deleteAnnotation} must be "true" when set, not ${JSON.stringify(del)}` };
  if (createOnly !== undefined && createOnly !== 'true') return { error: `${createOnlyAnnotation} must be "true" when set, not ${JSON.stringify(createOnly)}` };
  if (del === 'true' && createOnly === 'true') return { error: `${deleteAnnotation} and ${createOnlyAnnotation} cannot both be set` };
  return { mode: del === 'true' ? 'delete' : createOnly === 'true' ? 'create-only' : 'apply' };
}
