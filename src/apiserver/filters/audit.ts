// Audit: after an authenticated request has been answered (a refusal by authorization included),
// every completion listener hears who did what and with which result. It sits before
// authorization, as in kube-apiserver, so that refused requests are recorded too, and before
// impersonation: the record names who authenticated, and the impersonated user beside.
import type { CompletedRequest } from '../types.js';
import type { Filter } from './chain.js';

export function audit(listeners: readonly ((request: CompletedRequest) => void)[]): Filter {
  return async (ctx, next) => {
    const { attributes } = ctx;
    if (attributes && listeners.length > 0) {
      ctx.reply.raw.once('close', () => {
        const completed: CompletedRequest = {
          attributes, code: ctx.reply.raw.statusCode, userAgent: ctx.request.headers['user-agent'] ?? '', requestId: String(ctx.request.id),
          ...(ctx.impersonatedBy ? { impersonatedUser: ctx.user } : {}),
        };
        for (const listener of listeners) listener(completed);
      });
    }
    return next();
  };
}
