// Turns an HTTP method and URL into the request information kube-apiserver's RequestInfoFactory
// derives: resource requests (`/api/v1/...`, `/apis/<group>/<version>/...`) get verb, API group,
// resource, subresource, namespace and name; everything else is a non-resource request on a path.
// This is the one implementation: the server's filter chain routes and authorizes with it, and
// the authorizer (rbac.ts), the audit line (filters/audit-log.ts) and the Forbidden message read its result.
import { parseBool } from '../http/query.js';

export interface UserInfo {
  name: string;
  groups: string[];
  uid?: string;
  /** Extra attributes (an impersonating request's Impersonate-Extra-* headers). */
  extra?: Record<string, string[]>;
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

/** The attributes without the user, plus what routing needs beyond authorization. */
export interface RequestInfo extends Omit<RequestAttributes, 'user'> {
  /** The name as the path gives it ('' for collections, even when a field selector names one). */
  pathName: string;
  /** The path segments from the resource on (resource, name, subresource, anything after). */
  parts: string[];
}

const METHOD_VERBS: Record<string, string> = {
  GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete',
};

// kube treats `/namespaces/<ns>/status` and `/finalize` as subresources of the namespace itself.
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The request information for a method and a URL (path and optional query). A `watch` that does
 * not parse counts as a watch here, as in kube: the stricter verb is authorized, and the handler
 * refuses the value with a 400.
 */
export function requestInfo(method: string, url: string): RequestInfo {
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  const query = new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
  const info: RequestInfo = {
    verb: (METHOD_VERBS[method.toUpperCase()] ?? method.toLowerCase()),
    resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '',
    namespace: '', name: '', path, pathName: '', parts: [],
  };
  let parts = path.split('/').filter((p) => p !== '').map(decodeSegment);
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  const prefix = parts[0];
  parts = parts.slice(1);
  if (prefix === 'apis') {
    if (parts.length < 3) return info;
    info.apiGroup = parts[0];
    parts = parts.slice(1);
  }
  info.resourceRequest = true;
  info.apiVersion = parts[0];
  parts = parts.slice(1);
  if (parts[0] === 'watch' || parts[0] === 'proxy') {
    info.verb = parts[0];
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1];
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
  }
  info.parts = parts;
  info.resource = parts[0] ?? '';
  info.name = info.pathName = parts[1] ?? '';
  if (parts.length >= 3 && info.verb !== 'proxy') info.subresource = parts[2];
  if (info.name === '' && info.verb === 'get') {
    const watch = query.get('watch');
    info.verb = watch !== null && watch !== '' && parseBool(watch) !== false ? 'watch' : 'list';
    const selector = query.get('fieldSelector');
    if (selector) info.fieldSelector = selector;
    const named = /(?:^|,)metadata\.name==?([^,]+)/.exec(query.get('fieldSelector') ?? '');
    if (named) info.name = named[1];
  }
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}

/** The attributes of one request, as kube-apiserver computes them. */
export function requestAttributes(user: UserInfo, method: string, url: string): RequestAttributes {
  return withUser(user, requestInfo(method, url));
}

/** The authorization attributes of request information. */
export function withUser(user: UserInfo, info: RequestInfo): RequestAttributes {
  const { pathName: _pathName, parts: _parts, ...attributes } = info;
  return { user, ...attributes };
}
