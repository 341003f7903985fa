// The small non-resource endpoints: health (`/healthz`, `/livez`, `/readyz` and their `ping`
// checks), `/version` and `/metrics`.
import type { Registry as MetricsRegistry } from 'prom-client';
import { sendJson } from '../http/respond.js';
import type { AuthorizedContext } from '../filters/chain.js';
import type { Storage } from '../storage/types.js';

export const KUBERNETES_VERSION = { major: '1', minor: '33', gitVersion: 'v1.33.0+bosun' };

export const VERSION_INFO = {
  ...KUBERNETES_VERSION,
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'gc',
  platform: `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

export function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/ping)?$/.test(path);
}

/**
 * `/healthz`, `/livez`, `/readyz`: ok, except that /readyz fails (500, kube's text) while the
 * store does not answer, so that balancers take the server out until its etcd is back.
 */
export function serveHealth(storage: Pick<Storage, 'ready'>) {
  return async (ctx: AuthorizedContext): Promise<void> => {
    ctx.reply.header('content-type', 'text/plain; charset=utf-8');
    if (ctx.path === '/readyz' && storage.ready && !(await storage.ready())) {
      ctx.reply.code(500).send('[+]ping ok\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n');
      return;
    }
    ctx.reply.send('ok');
  };
}

/** `/version`: bosun's, or the Kubernetes version the server was started as (kube-apiserver's image tag). */
export function serveVersion(gitVersion?: string) {
  const info = gitVersion ? { ...VERSION_INFO, ...versionParts(gitVersion) } : VERSION_INFO;
  return async (ctx: AuthorizedContext): Promise<void> => {
    sendJson(ctx.reply, 200, info);
  };
}

/** major, minor and gitVersion of a version such as `v1.33.1` (minor with a `+` when it has a suffix, as kube's are). */
export function versionParts(gitVersion: string): { major: string; minor: string; gitVersion: string } {
  const m = /^v(\d+)\.(\d+)\.\d+(.*)$/.exec(gitVersion);
  if (!m) throw new Error(`a Kubernetes version looks like v1.33.1, got "${gitVersion}"`);
  return { major: m[1], minor: m[3] ? `${m[2]}+` : m[2], gitVersion };
}

export function serveMetrics(metrics: MetricsRegistry) {
  return async (ctx: AuthorizedContext): Promise<void> => {
    ctx.reply.header('content-type', metrics.contentType).send(await metrics.metrics());
  };
}
