// Authorization: the current authorizer (every authenticated user may do everything, until
// access control installs RBAC) decides on the request's attributes, resource and
// non-resource requests alike; a refusal is a 403 Status with the authorizer's reason.
import { errors } from '../errors.js';
import type { Authorizer } from '../types.js';
import type { Filter } from './chain.js';

export function authorization(current: () => Authorizer): Filter {
  return async (ctx, next) => {
    const refusal = current()(ctx.attributes!);
    if (refusal !== undefined) throw errors.forbidden(refusal);
    return next();
  };
}
