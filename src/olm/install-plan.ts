// What an InstallPlan holds (pure): for each resolved bundle its steps — its CRDs first, then its
// ClusterServiceVersion, then its other manifests — and, for a bundle pulled in as a dependency, a
// Subscription that keeps it on its channel afterwards, as OLM's resolver adds one. Each step's
// manifest is the object as it will be applied (namespaced objects put in the plan's namespace;
// the CSV labelled with its package and annotated with the bundle's properties, so that what is
// installed can be told by package and by the APIs it provides).
import type * as api from '../api/index.js';
import type { Bundle } from './fbc.js';
import { OLM_GROUP } from './context.js';
import type { Resolved } from './resolve.js';

/** The annotation on a CSV with its bundle's olm.package and olm.gvk properties (OLM's). */
export const PROPERTIES_ANNOTATION = 'operatorframework.io/properties';

/** The label OLM puts on what it installs for a package in a namespace: `operators.coreos.com/<package>.<namespace>`. */
export const packageLabel = (packageName: string, namespace: string) => `operators.coreos.com/${packageName}.${namespace}`.slice(0, 316);

/** Kinds that are cluster-scoped among what bundles carry (anything else is put in the plan's namespace). */
const CLUSTER_SCOPED = new Set(['CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'APIService', 'PriorityClass', 'StorageClass', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ConsoleYAMLSample', 'ConsoleQuickStart', 'ConsoleCLIDownload', 'ConsoleLink']);

const groupVersion = (apiVersion: string | undefined) => {
  const value = apiVersion ?? 'v1';
  return value.includes('/') ? { group: value.split('/')[0], version: value.split('/')[1] } : { group: '', version: value };
};

/**
 * The bundle's CSV as it is installed into `namespace`. An upgrade's CSV replaces the installed one
 * whatever its own spec.replaces says (a skips or skipRange jump), as OLM rewrites it, so that the
 * installed one is the one that goes Replacing and then away.
 */
function installedCsv(bundle: Bundle, csv: api.Unstructured, namespace: string, replacing: string | undefined): api.Unstructured {
  const spec = (csv.spec ?? {}) as Record<string, unknown>;
  const properties = bundle.properties.filter((p) => p.type === 'olm.package' || p.type === 'olm.gvk' || p.type === 'olm.gvk.required' || p.type === 'olm.package.required');
  return {
    ...csv,
    metadata: {
      ...csv.metadata,
      namespace,
      labels: { ...csv.metadata.labels, [packageLabel(bundle.package, namespace)]: '' },
      annotations: { ...csv.metadata.annotations, [PROPERTIES_ANNOTATION]: JSON.stringify({ properties }) },
    },
    ...(replacing ? { spec: { ...spec, replaces: replacing } } : {}),
  };
}

/**
 * The steps of a plan installing `resolved` (the target first, then its dependencies) into
 * `namespace`; `replacing` is the CSV the target upgrades.
 */
export function planSteps(resolved: readonly Resolved[], namespace: string, dependencyApproval: 'Automatic' | 'Manual', replacing?: string): api.InstallPlanStep[] {
  const steps: api.InstallPlanStep[] = [];
  const step = (r: Resolved, csvName: string, object: api.Unstructured): api.InstallPlanStep => ({
    resolving: csvName,
    resource: { ...groupVersion(object.apiVersion), kind: String(object.kind), name: object.metadata.name, sourceName: r.source.name, sourceNamespace: r.source.namespace, manifest: JSON.stringify(object) },
    status: 'Unknown',
  });
  for (const [i, r] of resolved.entries()) {
    const csv = r.bundle.objects.find((o) => o.kind === 'ClusterServiceVersion');
    const csvName = csv?.metadata.name ?? r.bundle.name;
    const placed = (o: api.Unstructured): api.Unstructured => (CLUSTER_SCOPED.has(String(o.kind)) ? o : { ...o, metadata: { ...o.metadata, namespace } });
    for (const crd of r.bundle.objects.filter((o) => o.kind === 'CustomResourceDefinition')) steps.push(step(r, csvName, crd));
    if (csv) steps.push(step(r, csvName, installedCsv(r.bundle, csv, namespace, i === 0 ? replacing : undefined)));
    for (const other of r.bundle.objects.filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'ClusterServiceVersion')) steps.push(step(r, csvName, placed(other)));
    if (i > 0) {
      const subscription: api.Subscription = {
        apiVersion: `${OLM_GROUP}/v1alpha1`,
        kind: 'Subscription',
        metadata: { name: `${r.pkg.name}-${r.channel.name}-${r.source.name}-${r.source.namespace}`.slice(0, 253).toLowerCase(), namespace },
        spec: { name: r.pkg.name, channel: r.channel.name, source: r.source.name, sourceNamespace: r.source.namespace, startingCSV: csvName, installPlanApproval: dependencyApproval },
      };
      steps.push(step(r, csvName, subscription as unknown as api.Unstructured));
    }
  }
  return steps;
}

/** The CSV names a plan installs, in its order (the target first). */
export const planCsvNames = (resolved: readonly Resolved[]) => resolved.map((r) => r.bundle.objects.find((o) => o.kind === 'ClusterServiceVersion')?.metadata.name ?? r.bundle.name);

/** Why a bundle cannot be installed from its catalog alone (no inline manifests, no CSV), or undefined. */
export function uninstallable(r: Resolved): string | undefined {
  if (r.bundle.objects.length === 0) return `bundle ${r.bundle.name} (package "${r.pkg.name}") carries no manifests (olm.bundle.object): bosun installs bundles whose manifests are in the catalog, and does not pull bundle images (${r.bundle.image ?? 'none'})`;
  if (!r.bundle.objects.some((o) => o.kind === 'ClusterServiceVersion')) return `bundle ${r.bundle.name} (package "${r.pkg.name}") has no ClusterServiceVersion among its manifests`;
  return undefined;
}
