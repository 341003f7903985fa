// Discovery: `/api` (APIVersions), `/apis` (APIGroupList), `/apis/<group>` (APIGroup) and the
// APIResourceList of each group-version, with subresources as their own entries. A group or
// version that does not answer is never advertised. Groups that service-backed APIServices hand to
// other servers are listed after the built-in and custom ones; their resource lists are those
// servers' own (aggregator/proxy.ts passes the request on).
// Aggregated discovery (apidiscovery.k8s.io v2, and v2beta1 for kubectl before 1.30): a client
// that asks `/api` and `/apis` for an APIGroupDiscoveryList gets every group, version and
// resource in those two answers instead of one request per group-version; an aggregated server's
// resources are the document it last answered the availability check with, Stale while it does
// not answer, as kube-aggregator serves them.
import { errors } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { acceptClauses } from '../http/negotiate.js';
import { sendJson } from '../http/respond.js';
import { storageVersionHash } from '../registry/registry.js';
import { VERBS, type ResourceType } from '../registry/resource-type.js';
import type { ServerState } from './state.js';
import { strategyFor } from '../kinds/index.js';
import { aggregatedGroups, serviceBackedFor } from '../aggregator/api-services.js';
import { storedApiServices } from '../aggregator/proxy.js';

/** metav1.APIGroup. */
interface ApiGroup {
  name: string;
  versions: { groupVersion: string; version: string }[];
  preferredVersion: { groupVersion: string; version: string };
}

/** metav1.APIResource. */
interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/**
 * The reviews (authentication.k8s.io and authorization.k8s.io, v1) are not stored objects: the
 * access control's POST handlers answer them. They are advertised once such handlers exist, as
 * kube-apiserver advertises them, so that `kubectl create -f tokenreview.yaml` finds its kind.
 */
const REVIEW_GROUPS: { name: string; resources: { name: string; kind: string; namespaced: boolean }[] }[] = [
  { name: 'authentication.k8s.io', resources: [{ name: 'tokenreviews', kind: 'TokenReview', namespaced: false }, { name: 'selfsubjectreviews', kind: 'SelfSubjectReview', namespaced: false }] },
  {
    name: 'authorization.k8s.io',
    resources: [
      { name: 'selfsubjectaccessreviews', kind: 'SelfSubjectAccessReview', namespaced: false },
      { name: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview', namespaced: false },
      { name: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false },
    ],
  },
];

function reviewGroup(state: ServerState, name: string) {
  return state.postHandlers.length > 0 && !state.registry.groups().some((g) => g.name === name) ? REVIEW_GROUPS.find((g) => g.name === name) : undefined;
}

function reviewResourceList(group: (typeof REVIEW_GROUPS)[number]) {
  return {
    kind: 'APIResourceList' as const, apiVersion: 'v1' as const, groupVersion: `${group.name}/v1`,
    resources: group.resources.map((r) => ({ name: r.name, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['create'] })),
  };
}

/** apidiscovery's APIResourceDiscovery (a resource with its subresources). */
interface ResourceDiscovery {
  resource: string;
  responseKind: { group: string; version: string; kind: string };
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: { subresource: string; responseKind: { group: string; version: string; kind: string }; verbs: string[] }[];
}

interface VersionDiscovery {
  version: string;
  resources: ResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

const DISCOVERY_GROUP = 'apidiscovery.k8s.io';

/** The apidiscovery version the Accept header asks for first (clauses in order of preference), or undefined for the legacy documents. */
export function aggregatedDiscoveryVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  if (!accept) return undefined;
  for (const { type, subtype, params } of acceptClauses(accept)) {
    const json = (type === 'application' && (subtype === 'json' || subtype === '*')) || (type === '*' && subtype === '*');
    const version = params.get('v');
    if (json && params.get('as') === 'APIGroupDiscoveryList' && params.get('g') === DISCOVERY_GROUP && (version === 'v2' || version === 'v2beta1')) return version;
    // A clause for the legacy documents (plain JSON, a wildcard) comes first: the legacy ones.
    if (json && !params.has('as')) return undefined;
  }
  return undefined;
}

/** One group-version's legacy APIResourceList as apidiscovery's resources: subresources under their resource. */
function resourcesOf(list: { groupVersion?: string; resources?: ApiResource[] }): ResourceDiscovery[] {
  const [group, version] = (list.groupVersion ?? '').includes('/') ? (list.groupVersion as string).split('/') : ['', list.groupVersion ?? ''];
  const kindOf = (r: ApiResource) => ({ group: r.group ?? group, version: r.version ?? version, kind: r.kind });
  const out: ResourceDiscovery[] = [];
  const byName = new Map<string, ResourceDiscovery>();
  for (const r of Array.isArray(list.resources) ? list.resources : []) {
    const [name, subresource] = r.name.split('/');
    if (subresource === undefined) {
      const entry: ResourceDiscovery = { resource: name, responseKind: kindOf(r), scope: r.namespaced ? 'Namespaced' : 'Cluster', singularResource: r.singularName || r.kind.toLowerCase(), verbs: r.verbs ?? [] };
      if (r.shortNames?.length) entry.shortNames = r.shortNames;
      if (r.categories?.length) entry.categories = r.categories;
      byName.set(name, entry);
      out.push(entry);
    } else {
      const parent = byName.get(name);
      if (parent) (parent.subresources ??= []).push({ subresource, responseKind: kindOf(r), verbs: r.verbs ?? [] });
    }
  }
  return out;
}

interface GroupDiscovery {
  metadata: { name?: string; creationTimestamp: null };
  versions: VersionDiscovery[];
}

/** A group's entry (the core group has no name), its versions in order of preference. */
function groupDiscovery(name: string | undefined, versions: VersionDiscovery[]): GroupDiscovery {
  return { metadata: { ...(name === undefined ? {} : { name }), creationTimestamp: null }, versions };
}

function sendDiscoveryList(ctx: AuthorizedContext, version: 'v2' | 'v2beta1', items: GroupDiscovery[]): void {
  const contentType = `application/json;g=${DISCOVERY_GROUP};v=${version};as=APIGroupDiscoveryList`;
  const body = { kind: 'APIGroupDiscoveryList', apiVersion: `${DISCOVERY_GROUP}/${version}`, metadata: {}, items };
  ctx.reply.code(200).header('content-type', contentType).header('vary', 'Accept').send(Buffer.from(JSON.stringify(body)));
}

/** `/api`, `/apis`, `/api/<v>`, `/apis/<g>`, `/apis/<g>/<v>`: the paths discovery answers. */
export function isDiscoveryPath(path: string): boolean {
  return /^\/(api(\/[^/]+)?|apis(\/[^/]+){0,2})$/.test(path);
}

function groupInfo(g: { name: string; versions: string[] }): ApiGroup {
  return {
    name: g.name,
    versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${g.name}/${g.versions[0]}`, version: g.versions[0] },
  };
}

/** The verbs a type's collection and objects answer (namespaces have no collection delete, as in kube). */
export function verbsOf(type: ResourceType): string[] {
  return type.builtin && type.group === '' && type.resource === 'namespaces' ? VERBS.filter((v) => v !== 'deletecollection') : VERBS;
}

function resourceList(state: ServerState, group: string, version: string): { kind: 'APIResourceList'; apiVersion: 'v1'; groupVersion: string; resources: ApiResource[] } {
  const withPostHandlers = state.postHandlers.length > 0;
  const entries: ApiResource[] = [];
  for (const t of state.registry.resources(group, version)) {
    const entry: ApiResource = { name: t.resource, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: verbsOf(t) };
    if (t.shortNames.length) entry.shortNames = t.shortNames;
    if (t.categories.length) entry.categories = t.categories;
    entry.storageVersionHash = storageVersionHash(t);
    entries.push(entry);
    if (t.status) entries.push({ name: `${t.resource}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    for (const sub of Object.keys(strategyFor(t)?.subresourceUpdates ?? {}).filter((s) => s !== 'status')) {
      entries.push({ name: `${t.resource}/${sub}`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
    }
    if (t.scale) entries.push({ name: `${t.resource}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    if (t.builtin && t.resource === 'pods' && !t.group) {
      entries.push({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
      entries.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
      if (withPostHandlers) entries.push({ name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
    }
    if (t.builtin && t.resource === 'serviceaccounts' && !t.group && withPostHandlers) {
      entries.push({ name: 'serviceaccounts/token', singularName: '', namespaced: true, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources: entries };
}

export function serveDiscovery(state: ServerState) {
  return async (ctx: AuthorizedContext): Promise<void> => {
    const { registry } = state;
    const [prefix, first, second] = ctx.path.split('/').filter(Boolean);
    const aggregatedVersion = first === undefined ? aggregatedDiscoveryVersion(ctx.request.headers.accept) : undefined;
    if (prefix === 'api') {
      if (aggregatedVersion) {
        const versions = ['v1'].filter((v) => registry.hasGroupVersion('', v));
        sendDiscoveryList(ctx, aggregatedVersion, [groupDiscovery(undefined, versions.map((v) => ({ version: v, resources: resourcesOf(resourceList(state, '', v)), freshness: 'Current' })))]);
        return;
      }
      if (first === undefined) {
        sendJson(ctx.reply, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: state.serverAddress() }] });
        return;
      }
      if (!registry.hasGroupVersion('', first)) throw errors.pathNotFound(ctx.path);
      sendJson(ctx.reply, 200, resourceList(state, '', first));
      return;
    }
    const local = registry.groups();
    const apiServices = storedApiServices(state.storage);
    const aggregated = aggregatedGroups(apiServices).filter((g) => !local.some((l) => l.name === g.name));
    const groups = [...local, ...aggregated];
    if (first === undefined && aggregatedVersion) {
      const served = local.map((g) => groupDiscovery(g.name, g.versions.map((v) => ({ version: v, resources: resourcesOf(resourceList(state, g.name, v)), freshness: 'Current' }))));
      const reviews = REVIEW_GROUPS.filter((g) => reviewGroup(state, g.name)).map((g) => groupDiscovery(g.name, [{ version: 'v1', resources: resourcesOf(reviewResourceList(g)), freshness: 'Current' }]));
      const remote = aggregated.map((g) =>
        groupDiscovery(g.name, g.versions.map((v): VersionDiscovery => {
          const apiService = serviceBackedFor(apiServices, g.name, v);
          const document = apiService ? state.aggregatedDiscovery.get(apiService.metadata.name) : undefined;
          const list = document as { kind?: unknown; groupVersion?: unknown; resources?: ApiResource[] } | undefined;
          return list?.kind === 'APIResourceList' && list.groupVersion === `${g.name}/${v}`
            ? { version: v, resources: resourcesOf(list as { groupVersion: string; resources?: ApiResource[] }), freshness: 'Current' }
            : { version: v, resources: [], freshness: 'Stale' };
        })),
      );
      sendDiscoveryList(ctx, aggregatedVersion, [...served, ...reviews, ...remote]);
      return;
    }
    if (first === undefined) {
      const reviews = REVIEW_GROUPS.filter((g) => reviewGroup(state, g.name)).map((g) => ({ name: g.name, versions: ['v1'] }));
      sendJson(ctx.reply, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [...local, ...reviews, ...aggregated].map(groupInfo) });
      return;
    }
    const reviews = reviewGroup(state, first);
    if (reviews) {
      if (second === undefined) sendJson(ctx.reply, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupInfo({ name: reviews.name, versions: ['v1'] }) });
      else if (second === 'v1') sendJson(ctx.reply, 200, reviewResourceList(reviews));
      else throw errors.pathNotFound(ctx.path);
      return;
    }
    if (second === undefined) {
      const group = groups.find((g) => g.name === first);
      if (!group) throw errors.pathNotFound(ctx.path);
      sendJson(ctx.reply, 200, { kind: 'APIGroup', apiVersion: 'v1', ...groupInfo(group) });
      return;
    }
    if (!registry.hasGroupVersion(first, second)) throw errors.pathNotFound(ctx.path);
    sendJson(ctx.reply, 200, resourceList(state, first, second));
  };
}
