// Where the etcd backend keeps each object: kube-apiserver's layout, so that tools reading etcd
// directly (`etcdctl get /registry/secrets/<namespace>/<name>`, backup inspection,
// encryption-at-rest checks) find objects where they would on a Kubernetes cluster.
//
// The storage key `/<group or "core">/<resource>/<namespace or "">/<name>` (storage/types.ts)
// lives, under the prefix (`/registry`), at:
//   - built-in kinds: `/<resource prefix>/<namespace>/<name>`, or `/<resource prefix>/<name>` when
//     cluster-scoped. The resource prefix is the resource's plural without its group, except where
//     kube-apiserver compiles in another (its SpecialDefaultResourcePrefixes): Services at
//     `services/specs`, Endpoints at `services/endpoints`, Nodes at `minions`;
//   - every other type — custom resources, the apiextensions and apiregistration groups (kube keeps
//     CRDs at `/registry/apiextensions.k8s.io/customresourcedefinitions/<name>`, the aggregator
//     APIServices at `/registry/apiregistration.k8s.io/apiservices/<name>`), events.k8s.io Events
//     (kept apart from core Events here, where kube stores both at `events/`) and the allocation
//     claims (allocation-claims.ts) — at `/<group>/<resource>/[<namespace>/]<name>`.
//
// Until the layout changed, the etcd key was the prefix followed by the storage key itself
// (`/registry/core/namespaces//default`); `legacyStorageKey` reads such keys, so that a store
// written that way can be moved (etcd.ts does it on start).

/** The key kube's compaction scheme takes turns on (etcd.ts), below the prefix. */
export const COMPACT_KEY = '/compact_rev_key';
/** Written by a server whose watch replays history, to learn when the replay is done (etcd.ts follow()). */
export const MARKER_KEY = '/watch_marker';
/** Keys below the prefix that hold no object. */
export const isBookkeeping = (path: string): boolean => path === COMPACT_KEY || path === MARKER_KEY;

/** Built-in resources kept at their plural without a group, as kube-apiserver keeps them. */
const RESOURCE_PREFIXES: Record<string, string> = {
  'core/namespaces': 'namespaces',
  'core/nodes': 'minions',
  'core/pods': 'pods',
  'core/services': 'services/specs',
  'core/endpoints': 'services/endpoints',
  'core/configmaps': 'configmaps',
  'core/secrets': 'secrets',
  'core/resourcequotas': 'resourcequotas',
  'core/limitranges': 'limitranges',
  'core/persistentvolumes': 'persistentvolumes',
  'core/persistentvolumeclaims': 'persistentvolumeclaims',
  'storage.k8s.io/storageclasses': 'storageclasses',
  'scheduling.k8s.io/priorityclasses': 'priorityclasses',
  'core/serviceaccounts': 'serviceaccounts',
  'core/events': 'events',
  'core/replicationcontrollers': 'controllers',
  'coordination.k8s.io/leases': 'leases',
  'apps/deployments': 'deployments',
  'apps/replicasets': 'replicasets',
  'apps/daemonsets': 'daemonsets',
  'apps/statefulsets': 'statefulsets',
  'apps/controllerrevisions': 'controllerrevisions',
  'batch/jobs': 'jobs',
  'batch/cronjobs': 'cronjobs',
  'autoscaling/horizontalpodautoscalers': 'horizontalpodautoscalers',
  'policy/poddisruptionbudgets': 'poddisruptionbudgets',
  'rbac.authorization.k8s.io/roles': 'roles',
  'rbac.authorization.k8s.io/rolebindings': 'rolebindings',
  'rbac.authorization.k8s.io/clusterroles': 'clusterroles',
  'rbac.authorization.k8s.io/clusterrolebindings': 'clusterrolebindings',
  'discovery.k8s.io/endpointslices': 'endpointslices',
  'certificates.k8s.io/certificatesigningrequests': 'certificatesigningrequests',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': 'mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingwebhookconfigurations': 'validatingwebhookconfigurations',
};

/** The group/resource a built-in resource prefix belongs to, longest prefixes first. */
const BY_PREFIX = Object.entries(RESOURCE_PREFIXES)
  .map(([groupResource, prefix]) => ({ groupResource, segments: prefix.split('/') }))
  .sort((a, b) => b.segments.length - a.segments.length);

/** The group/resources whose objects are kept without their group (for the layout's own test). */
export const UNGROUPED_RESOURCES: readonly string[] = Object.keys(RESOURCE_PREFIXES);

interface Parts {
  groupResource: string;
  namespace: string;
  name: string;
}

const STORAGE_KEY = /^\/([^/]+\/[^/]+)\/([^/]*)\/([^/]+)$/;

function partsOf(storageKey: string): Parts {
  const m = STORAGE_KEY.exec(storageKey);
  if (!m) throw new Error(`${JSON.stringify(storageKey)} is not a storage key (/<group>/<resource>/<namespace>/<name>)`);
  return { groupResource: m[1], namespace: m[2], name: m[3] };
}

const keyOf = ({ groupResource, namespace, name }: Parts): string => `/${groupResource}/${namespace}/${name}`;

/** The etcd key, below the prefix, of a storage key: `/namespaces/default`, `/secrets/ns/name`. */
export function etcdPath(storageKey: string): string {
  const parts = partsOf(storageKey);
  const resource = RESOURCE_PREFIXES[parts.groupResource] ?? parts.groupResource;
  return `/${resource}${parts.namespace ? `/${parts.namespace}` : ''}/${parts.name}`;
}

/** The storage key of an etcd key below the prefix in kube's layout; undefined for any other key. */
export function storageKeyOf(path: string): string | undefined {
  const segments = path.split('/').slice(1);
  if (segments.some((s) => s === '')) return undefined;
  const builtin = BY_PREFIX.find((p) => p.segments.every((s, i) => segments[i] === s) && segments.length - p.segments.length <= 2 && segments.length > p.segments.length);
  const parts = builtin
    ? { groupResource: builtin.groupResource, rest: segments.slice(builtin.segments.length) }
    : segments.length === 3 || segments.length === 4
      ? { groupResource: `${segments[0]}/${segments[1]}`, rest: segments.slice(2) }
      : undefined;
  if (!parts) return undefined;
  const [namespace, name] = parts.rest.length === 2 ? parts.rest : ['', parts.rest[0]];
  const key = keyOf({ groupResource: parts.groupResource, namespace, name });
  // A built-in resource written with its group (the old layout) is no key of this one.
  return etcdPath(key) === path ? key : undefined;
}

/** The storage key of an etcd key below the prefix in the old layout (the storage key itself). */
export function legacyStorageKey(path: string): string | undefined {
  return STORAGE_KEY.test(path) ? path : undefined;
}
