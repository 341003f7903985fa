// Shutdown: once the server is stopping, a request that still arrives on an open connection is
// answered 503 with a Status (and the connection closed) instead of being served, so clients
// retry elsewhere. (fastify's own 503 at this point has a body that is not a Status.)
import { ApiError } from '../errors.js';
import type { Filter } from './chain.js';

export function shutdown(stopping: () => boolean): Filter {
  return async (ctx, next) => {
    if (!stopping()) return next();
    ctx.reply.header('connection', 'close').header('retry-after', '1');
    throw new ApiError(503, 'ServiceUnavailable', 'the API server is shutting down', { retryAfterSeconds: 1 });
  };
}
