// Which payload manifests a cluster gets, and how: the inclusion rules of OpenShift's
// library-go manifest.Include (profile, capabilities, feature set, overrides) and the apply
// mode annotations (release.openshift.io/delete, release.openshift.io/create-only). Pure.
import type { Manifest } from './manifest.js';

export const defaultProfile = 'self-managed-high-availability';
export const profileAnnotationPrefix = 'include.release.openshift.io/';
export const capabilityAnnotation = 'capability.openshift.io/name';
export const featureSetAnnotation = 'release.openshift.io/feature-set';
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
  if (options.featureSet !== undefined && a[featureSetAnnotation] !== undefined) {
    const sets = a[featureSetAnnotation].split(',').map((s) => s.trim());
    const wanted = options.featureSet === '' ? 'Default' : options.featureSet;
    if (!sets.includes(wanted)) return { included: false, reason: `feature set ${wanted} is not one of ${a[featureSetAnnotation]}` };
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
