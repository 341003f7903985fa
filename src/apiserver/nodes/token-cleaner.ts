// The bootstrap-token cleaner (kube-controller-manager's tokencleaner): bootstrap token Secrets
// whose `expiration` has passed are deleted, so that a node's one-time credential does not linger
// after it stopped authenticating anyone. Runs at start and then periodically; the decision of
// which Secrets go is pure (expiredBootstrapTokens).
import { logger } from '../../common/log.js';
import { ApiError } from '../errors.js';
import type { ApiServer } from '../server.js';
import { BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_SECRET_TYPE } from './bootstrap-tokens.js';

const log = logger('token-cleaner');

import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

/** The bootstrap token Secrets among `secrets` that have expired at `now`. */
export function expiredBootstrapTokens(secrets: api.Secret[], now: Date): api.Secret[] {
  return secrets.filter((s) => {
    if (s.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || !String(s.metadata?.name ?? '').startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX)) return false;
    const raw = s.data?.expiration;
    if (typeof raw !== 'string') return false;
    const at = Date.parse(Buffer.from(raw, 'base64').toString('utf8'));
    return !Number.isNaN(at) && at <= now.getTime();
  });
}

export function enableBootstrapTokenCleaner(server: ApiServer, options: { intervalMs?: number } = {}): { stop(): void } {
  const secrets = server.registry.lookup('', 'v1', 'secrets')!;
  const clean = async () => {
    const stored = server.storage.list('/core/secrets/kube-system/').items.map((i) => asKind<api.Secret>(i.object));
    for (const secret of expiredBootstrapTokens(stored, new Date())) {
      try {
        await server.resources.delete(secrets, 'kube-system', secret.metadata.name, { preconditions: { uid: secret.metadata.uid } });
        log.info({ secret: `kube-system/${secret.metadata.name}` }, 'deleted an expired bootstrap token');
      } catch (err) {
        // Gone or replaced in the meantime: the next round sees what is there.
        if (!(err instanceof ApiError)) log.warn({ err }, 'deleting an expired bootstrap token failed');
      }
    }
  };
  void clean();
  const timer = setInterval(() => void clean(), options.intervalMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
