// Recovery: whatever a later filter or handler throws — an ApiError, fastify's own errors, a bug —
// the client gets a Kubernetes Status, and the server goes on. Unexpected errors are logged with
// their stack; an error answer the server meant (an ApiError of 5xx: a webhook that failed, etcd
// without quorum) is logged without one, and the 503s of a shutdown's drain only at debug.
import type { Logger } from '../../common/log.js';
import { ApiError } from '../errors.js';
import { sendError, statusOf } from '../http/respond.js';
import type { Filter } from './chain.js';

export function recovery(log: Logger): Filter {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      const status = statusOf(e as Error);
      if (status.code >= 500) {
        const request = { method: ctx.request.method, url: ctx.request.url };
        if (!(e instanceof ApiError)) log.warn({ err: e, ...request }, 'request failed');
        else if (status.code === 503 && ctx.reply.getHeader('retry-after') !== undefined) log.debug({ ...request, code: status.code, message: status.message }, 'request answered: retry later');
        else log.info({ ...request, code: status.code, reason: status.reason, message: status.message }, 'request answered with an error');
      }
      // A watch that already streams cannot change its status; it ends.
      if (ctx.reply.sent || ctx.reply.raw.headersSent) {
        ctx.reply.raw.end();
        return;
      }
      sendError(ctx.reply, status);
    }
  };
}
