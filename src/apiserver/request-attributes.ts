// Turns an HTTP method and URL into the authorization attributes kube-apiserver's RequestInfoFactory
// derives: resource requests (`/api/v1/...`, `/apis/<group>/<version>/...`) get verb, API group,
// resource, subresource, namespace and name; everything else is a non-resource request on a path.
// The authorizer (rbac.ts), the audit line (audit.ts) and the Forbidden message all read these.

export interface UserInfo {
  name: string;
  groups: string[];
  uid?: string;
}

export interface RequestAttributes {
  user: UserInfo;
  verb: string;
  /** True for /api and /apis resource paths; false for non-resource URLs such as /version. */
  resourceRequest: boolean;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The URL path without the query (what nonResourceURLs rules match). */
  path: string;
  /** The raw field selector of a list or watch (kube's GetFieldSelector; the Node authorizer reads it). */
  fieldSelector?: string;
}

const METHOD_VERBS: Record<string, string> = {
  GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete',
};

// kube treats `/namespaces/<ns>/status` and `/finalize` as subresources of the namespace itself.
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function isTrue(value: string | null): boolean {
  return value === '1' || value === 'true';
}

/**
 * The attributes of one request, as kube-apiserver computes them. `url` may carry a query
 * (watch=1, fieldSelector=metadata.name=x turn a list into a watch / a named request).
 */
export function requestAttributes(user: UserInfo, method: string, url: string): RequestAttributes {
  const parsed = new URL(url, 'http://localhost');
  const path = parsed.pathname;
  const attrs: RequestAttributes = {
    user, verb: (METHOD_VERBS[method.toUpperCase()] ?? method.toLowerCase()),
    resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '',
    namespace: '', name: '', path,
  };
  let parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return attrs;
  const prefix = parts[0];
  parts = parts.slice(1);
  if (prefix === 'apis') {
    if (parts.length < 3) return attrs;
    attrs.apiGroup = parts[0];
    parts = parts.slice(1);
  }
  attrs.resourceRequest = true;
  attrs.apiVersion = parts[0];
  parts = parts.slice(1);
  if (parts[0] === 'watch' || parts[0] === 'proxy') {
    attrs.verb = parts[0];
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    attrs.namespace = parts[1];
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
  }
  attrs.resource = parts[0] ?? '';
  attrs.name = parts[1] ?? '';
  if (parts.length >= 3 && attrs.verb !== 'proxy') attrs.subresource = parts[2];
  if (attrs.name === '' && attrs.verb === 'get') {
    attrs.verb = isTrue(parsed.searchParams.get('watch')) ? 'watch' : 'list';
    if (parsed.searchParams.get('fieldSelector')) attrs.fieldSelector = parsed.searchParams.get('fieldSelector')!;
    const named = /(?:^|,)metadata\.name==?([^,]+)/.exec(parsed.searchParams.get('fieldSelector') ?? '');
    if (named) attrs.name = named[1];
  }
  if (attrs.name === '' && attrs.verb === 'delete') attrs.verb = 'deletecollection';
  return attrs;
}

/** Fills in the optional parts of attributes built elsewhere (the server's authorization hook). */
export function completeAttributes(a: {
  user: UserInfo; verb: string; resourceRequest: boolean; apiGroup: string; resource: string; path: string;
  subresource?: string; namespace?: string; name?: string; apiVersion?: string; fieldSelector?: string;
}): RequestAttributes {
  return {
    user: a.user, verb: a.verb, resourceRequest: a.resourceRequest, apiGroup: a.apiGroup, apiVersion: a.apiVersion ?? '',
    resource: a.resource, subresource: a.subresource ?? '', namespace: a.namespace ?? '', name: a.name ?? '', path: a.path,
    ...(a.fieldSelector ? { fieldSelector: a.fieldSelector } : {}),
  };
}
