// Recovery: whatever a later filter or handler throws — an ApiError, fastify's own errors, a bug —
// the client gets a Kubernetes Status, and the server goes on. Unexpected errors are logged.
import type { Logger } from '../../common/log.js';
import { sendError, statusOf } from '../http/respond.js';
import type { Filter } from './chain.js';

export function recovery(log: Logger): Filter {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      const status = statusOf(e as Error);
      if (status.code >= 500) log.warn({ err: e, method: ctx.request.method, url: ctx.request.url }, 'request failed');
      // A watch that already streams cannot change its status; it ends.
      if (ctx.reply.sent || ctx.reply.raw.headersSent) {
        ctx.reply.raw.end();
        return;
      }
      sendError(ctx.reply, status);
    }
  };
}
