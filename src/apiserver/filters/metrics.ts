// Request metrics, outermost in the chain so that every answer is counted (401s included):
// `apiserver_request_total` by verb, resource and code, `apiserver_request_duration_seconds`
// (watches excluded: they last as long as the client wants), open watches and the storage
// revision, served at /metrics.
import { Counter, Gauge, Histogram, Registry as MetricsRegistry } from 'prom-client';
import type { Logger } from '../../common/log.js';
import type { Storage } from '../storage/types.js';
import type { Filter } from './chain.js';

export interface RequestMetrics {
  registry: MetricsRegistry;
  openWatches: Gauge;
  filter: Filter;
}

export function requestMetrics(storage: Storage, log: Logger): RequestMetrics {
  const registry = new MetricsRegistry();
  const requestCount = new Counter({ name: 'apiserver_request_total', help: 'API requests by verb, resource and HTTP code', labelNames: ['verb', 'resource', 'code'], registers: [registry] });
  const requestDuration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'API request latency by verb and resource (watches excluded)',
    labelNames: ['verb', 'resource'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const openWatches = new Gauge({ name: 'apiserver_registered_watchers', help: 'Watches currently open', registers: [registry] });
  new Gauge({ name: 'apiserver_storage_revision', help: 'The current storage revision', registers: [registry], collect() { this.set(storage.currentRevision()); } });

  const filter: Filter = async (ctx, next) => {
    const startedAt = process.hrtime.bigint();
    ctx.reply.raw.once('close', () => {
      const resource = ctx.metricResource ?? '';
      const verb = ctx.metricResource !== undefined && ctx.attributes ? ctx.attributes.verb : ctx.request.method;
      const code = ctx.reply.raw.statusCode;
      requestCount.inc({ verb, resource, code: String(code) });
      if (verb === 'watch') return;
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      requestDuration.observe({ verb, resource }, seconds);
      log.debug({ method: ctx.request.method, url: ctx.request.url, code, ms: Math.round(seconds * 1000) }, 'request');
    });
    return next();
  };
  return { registry, openWatches, filter };
}
