// The small non-resource endpoints: health (`/healthz`, `/livez`, `/readyz` and their `ping`
// checks), `/version` and `/metrics`.
import type { Registry as MetricsRegistry } from 'prom-client';
import { sendJson } from '../http/respond.js';
import type { AuthorizedContext } from '../filters/chain.js';

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

export async function serveHealth(ctx: AuthorizedContext): Promise<void> {
  ctx.reply.header('content-type', 'text/plain; charset=utf-8').send('ok');
}

export async function serveVersion(ctx: AuthorizedContext): Promise<void> {
  sendJson(ctx.reply, 200, VERSION_INFO);
}

export function serveMetrics(metrics: MetricsRegistry) {
  return async (ctx: AuthorizedContext): Promise<void> => {
    ctx.reply.header('content-type', metrics.contentType).send(await metrics.metrics());
  };
}
