// Impersonation, as kube-apiserver's WithImpersonation: `kubectl --as=alice --as-group=devs` sends
// Impersonate-User, Impersonate-Group (repeated), Impersonate-Uid and Impersonate-Extra-<key>
// headers; the authenticated user must be allowed the verb `impersonate` on each of them —
// `users` (or `serviceaccounts` in its namespace for `system:serviceaccount:<ns>:<name>`) and
// `groups` in the core group, `uids` and `userextras/<key>` in authentication.k8s.io — and the
// request then runs, and is authorized, as the impersonated user. A group, uid or extra without
// a user is a 400; a refusal is a 403 naming what may not be impersonated. The impersonated user
// is in system:authenticated (a service account also in system:serviceaccounts and
// system:serviceaccounts:<ns> unless groups are given), as upstream; the headers go no further.
import { errors } from '../errors.js';
import { withUser } from '../auth/request-attributes.js';
import type { RequestAttributes } from '../auth/request-attributes.js';
import type { Authorizer, User } from '../types.js';
import type { Filter } from './chain.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA = 'impersonate-extra-';
const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

const isImpersonationHeader = (h: string): boolean => h === USER || h === GROUP || h === UID || h.startsWith(EXTRA);

type Headers = Record<string, string | string[] | undefined>;
const all = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** What the impersonation headers ask for, or undefined without any. Throws a 400 on a partial request. */
export function requestedImpersonation(headers: Headers): { user: User; checks: Omit<RequestAttributes, 'user'>[] } | undefined {
  const names = Object.keys(headers).filter(isImpersonationHeader);
  if (names.length === 0) return undefined;
  const name = all(headers[USER])[0];
  const groups = all(headers[GROUP]).flatMap((g) => g.split(',').map((x) => x.trim())).filter(Boolean);
  const uid = all(headers[UID])[0];
  const extra: Record<string, string[]> = {};
  for (const h of names.filter((x) => x.startsWith(EXTRA))) {
    // Header names carry the key percent-encoded (kubectl encodes what a header name cannot hold).
    extra[decodeURIComponent(h.slice(EXTRA.length))] = all(headers[h]).flatMap((v) => v.split(',').map((x) => x.trim()));
  }
  if (!name) {
    const what = [groups.length ? `groups=${JSON.stringify(groups)}` : '', uid ? `uid=${uid}` : '', Object.keys(extra).length ? `userExtras=${JSON.stringify(extra)}` : ''].filter(Boolean).join(', ');
    throw errors.badRequest(`requested [${what}] without impersonating a user`);
  }
  const check = (apiGroup: string, resource: string, target: string, namespace = '', subresource = ''): Omit<RequestAttributes, 'user'> => ({
    verb: 'impersonate', resourceRequest: true, apiGroup, apiVersion: '', resource, subresource, namespace, name: target, path: '',
  });
  const checks: Omit<RequestAttributes, 'user'>[] = [];
  const sa = SERVICE_ACCOUNT.exec(name);
  checks.push(sa ? check('', 'serviceaccounts', sa[2], sa[1]) : check('', 'users', name));
  for (const g of groups) checks.push(check('', 'groups', g));
  if (uid) checks.push(check('authentication.k8s.io', 'uids', uid));
  for (const [key, values] of Object.entries(extra)) for (const v of values) checks.push(check('authentication.k8s.io', 'userextras', v, '', key));

  const withGroups = [...groups];
  if (sa && groups.length === 0) withGroups.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
  if (name === 'system:anonymous') {
    if (!withGroups.includes('system:unauthenticated')) withGroups.push('system:unauthenticated');
  } else if (!withGroups.includes('system:authenticated')) withGroups.push('system:authenticated');
  const user: User = { name, groups: withGroups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
  return { user, checks };
}

/** Where a refused check says what may not be impersonated, as kube's Forbidden reads. */
function refusal(requester: User, c: Omit<RequestAttributes, 'user'>): string {
  const resource = c.subresource ? `${c.resource}/${c.subresource}` : c.resource;
  const scope = c.namespace ? `in the namespace "${c.namespace}"` : 'at the cluster scope';
  return `${c.resource}${c.apiGroup ? `.${c.apiGroup}` : ''} "${c.name}" is forbidden: User "${requester.name}" cannot impersonate resource "${resource}" in API group "${c.apiGroup}" ${scope}`;
}

export function impersonation(current: () => Authorizer): Filter {
  return async (ctx, next) => {
    const requested = requestedImpersonation(ctx.request.headers);
    if (!requested) return next();
    const requester = ctx.user!;
    for (const c of requested.checks) {
      if (current()({ user: requester, ...c }) !== undefined) throw errors.forbidden(refusal(requester, c));
    }
    ctx.impersonatedBy = requester;
    ctx.user = requested.user;
    ctx.attributes = withUser(requested.user, ctx.info!);
    for (const h of Object.keys(ctx.request.headers)) if (isImpersonationHeader(h)) delete ctx.request.headers[h];
    return next();
  };
}
