// Request information: verb, group, resource, namespace, name — or a non-resource path — from
// the method and URL, through the one implementation in auth/request-attributes.ts.
import { requestInfo, withUser } from '../auth/request-attributes.js';
import type { Filter } from './chain.js';

export function withRequestInfo(): Filter {
  return async (ctx, next) => {
    const search = ctx.request.url.indexOf('?');
    ctx.info = requestInfo(ctx.request.method, search < 0 ? ctx.path : `${ctx.path}${ctx.request.url.slice(search)}`);
    ctx.attributes = withUser(ctx.user!, ctx.info);
    return next();
  };
}
