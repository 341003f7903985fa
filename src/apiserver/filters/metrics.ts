// Request metrics under kube-apiserver's names, labels and buckets (its
// `endpoints/metrics`): `apiserver_request_total`, `apiserver_request_duration_seconds`,
// `apiserver_request_sli_duration_seconds`, `apiserver_response_sizes`,
// `apiserver_current_inflight_requests`, `apiserver_longrunning_requests`,
// `apiserver_watch_events_total` / `_sizes`, `apiserver_storage_objects` and, on the etcd
// backend, `etcd_request_duration_seconds` (writes: reads are served by the watch cache), served
// at /metrics.
// Two filters: `filter`, outermost, records every answer (401s included) when the response
// closes; `inflight`, after request information, counts what is in flight. Verbs are reported
// upper case as kube-apiserver does (LIST, WATCH, APPLY for server-side apply, CONNECT for
// exec/attach/portforward/proxy); long-running requests (WATCH and the streaming subresources)
// are left out of the latency histograms and counted in `apiserver_longrunning_requests` while
// open. Object counts are taken at scrape time, not per request.
import { Counter, Gauge, Histogram, Registry as MetricsRegistry } from 'prom-client';
import type { Logger } from '../../common/log.js';
import type { RequestInfo } from '../auth/request-attributes.js';
import type { Registry } from '../registry/registry.js';
import { storagePrefix } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { Filter, RequestContext } from './chain.js';
import { SeriesCounter, SeriesHistogram, type CounterSeries, type HistogramSeries } from './request-series.js';

/** kube-apiserver's request latency buckets (seconds). */
export const REQUEST_DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** kube-apiserver's SLI latency buckets (seconds). */
export const REQUEST_SLI_DURATION_BUCKETS = [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** Response sizes: exponential from 1000 bytes (1 KB) to 10^9 (1 GB), factor 10, 7 buckets. */
export const RESPONSE_SIZE_BUCKETS = Array.from({ length: 7 }, (_, i) => 1000 * 10 ** i);
/** Watch event sizes: exponential from 1024 bytes, factor 2, 8 buckets. */
export const WATCH_EVENT_SIZE_BUCKETS = Array.from({ length: 8 }, (_, i) => 1024 * 2 ** i);

const ENDPOINT_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
const COMPONENT = 'apiserver';

const VERBS: Record<string, string> = {
  get: 'GET', list: 'LIST', watch: 'WATCH', create: 'POST', update: 'PUT', patch: 'PATCH',
  delete: 'DELETE', deletecollection: 'DELETECOLLECTION', proxy: 'CONNECT',
};
const VALID_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT']);
const CONNECT_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy']);
/** Streaming subresources, long-running as in kube-apiserver (and left out of latency). */
const LONG_RUNNING_SUBRESOURCES = new Set(['exec', 'attach', 'portforward', 'proxy', 'log']);

/** Records one watch event of `bytes` bytes. */
export type WatchEventRecorder = (bytes: number) => void;

export interface RequestMetrics {
  registry: MetricsRegistry;
  /** Outermost: records every request when its response closes. */
  filter: Filter;
  /** After request information: in-flight and long-running gauges. */
  inflight: Filter;
  /** The recorder of a watch's events, for one group, version and kind. */
  watchEvents(group: string, version: string, kind: string): WatchEventRecorder;
  /** Records an etcd request (`etcd_request_duration_seconds`) on a storage key `/<group or core>/<resource>/…`. */
  etcdRequest(operation: string, key: string, seconds: number): void;
  /** Serves `apiserver_storage_objects` from this registry's types. */
  countObjects(types: Registry): void;
}

/** The reported verb: kube-apiserver's upper-case verb for a request. */
function reportedVerb(ctx: RequestContext, info: RequestInfo | undefined): string {
  const method = ctx.request.method;
  if (!info || !info.resourceRequest) return VALID_METHODS.has(method) ? (method === 'HEAD' ? 'GET' : method) : 'other';
  if (CONNECT_SUBRESOURCES.has(info.subresource) && info.verb !== 'get' && info.verb !== 'list') return 'CONNECT';
  if (info.verb === 'patch' && (ctx.request.headers['content-type'] ?? '').startsWith('application/apply-patch')) return 'APPLY';
  return VERBS[info.verb] ?? 'other';
}

function scopeOf(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  return info.resourceRequest ? 'cluster' : '';
}

function isLongRunning(verb: string, info: RequestInfo | undefined): boolean {
  return verb === 'WATCH' || verb === 'CONNECT' || (info !== undefined && LONG_RUNNING_SUBRESOURCES.has(info.subresource));
}

interface EndpointLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
}

/** The endpoint labels; a resource the server does not serve is reported without its names. */
function endpointLabels(ctx: RequestContext): EndpointLabels {
  const info = ctx.info;
  const verb = reportedVerb(ctx, info);
  if (!info || !info.resourceRequest || ctx.metricResource === undefined) {
    return { verb, group: '', version: '', resource: '', subresource: '', scope: '', component: COMPONENT };
  }
  return { verb, group: info.apiGroup, version: info.apiVersion, resource: ctx.metricResource, subresource: info.subresource, scope: scopeOf(info), component: COMPONENT };
}

export function requestMetrics(storage: Storage, log: Logger): RequestMetrics {
  const registry = new MetricsRegistry();
  // The four per-request families are request-series.ts's: a series found once per key, recorded
  // without prom-client's per-call label hashing (bench:apiserver's metrics on vs off).
  const requestCount = new SeriesCounter(
    'apiserver_request_total',
    'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    registry,
  );
  const requestDuration = new SeriesHistogram(
    'apiserver_request_duration_seconds',
    'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    REQUEST_DURATION_BUCKETS,
    registry,
  );
  const sliDuration = new SeriesHistogram(
    'apiserver_request_sli_duration_seconds',
    'Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.',
    REQUEST_SLI_DURATION_BUCKETS,
    registry,
  );
  const responseSizes = new SeriesHistogram(
    'apiserver_response_sizes',
    'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
    RESPONSE_SIZE_BUCKETS,
    registry,
  );
  // In flight: two numbers, set on the gauge when it is scraped.
  const inflightNow = { readOnly: 0, mutating: 0 };
  new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'],
    registers: [registry],
    collect() {
      this.set({ request_kind: 'readOnly' }, inflightNow.readOnly);
      this.set({ request_kind: 'mutating' }, inflightNow.mutating);
    },
  });
  const longRunning = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    labelNames: [...ENDPOINT_LABELS],
    registers: [registry],
  });
  const watchEventsTotal = new Counter({
    name: 'apiserver_watch_events_total',
    help: 'Number of events sent in watch clients',
    labelNames: ['group', 'version', 'kind'],
    registers: [registry],
  });
  const watchEventsSizes = new Histogram({
    name: 'apiserver_watch_events_sizes',
    help: 'Watch event size distribution in bytes',
    labelNames: ['group', 'version', 'kind'],
    buckets: WATCH_EVENT_SIZE_BUCKETS,
    registers: [registry],
  });

  // The series of one endpoint, code and dry run, found once.
  interface Series { count: CounterSeries; duration: HistogramSeries; sli: HistogramSeries; sizes: HistogramSeries }
  const series = new Map<string, Series>();
  const seriesOf = (labels: EndpointLabels, dryRun: string, code: number): Series => {
    const key = `${labels.verb} ${labels.group} ${labels.version} ${labels.resource} ${labels.subresource} ${labels.scope} ${dryRun} ${code}`;
    let found = series.get(key);
    if (!found) {
      const endpoint: Record<string, string> = { ...labels };
      const withDryRun = { ...labels, dry_run: dryRun };
      const endpointKey = `${labels.verb} ${labels.group} ${labels.version} ${labels.resource} ${labels.subresource} ${labels.scope}`;
      found = {
        count: requestCount.seriesFor(key, { ...withDryRun, code: String(code) }),
        duration: requestDuration.seriesFor(`${endpointKey} ${dryRun}`, withDryRun),
        sli: sliDuration.seriesFor(endpointKey, endpoint),
        sizes: responseSizes.seriesFor(endpointKey, endpoint),
      };
      series.set(key, found);
    }
    return found;
  };
  const debug = () => log.isLevelEnabled('debug');

  const filter: Filter = async (ctx, next) => {
    const startedAt = process.hrtime.bigint();
    ctx.reply.raw.once('close', () => {
      const labels = endpointLabels(ctx);
      const code = ctx.reply.raw.statusCode;
      const dryRun = ctx.query.string('dryRun') ?? '';
      const s = seriesOf(labels, dryRun, code);
      s.count.value++;
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      if (!isLongRunning(labels.verb, ctx.info)) {
        requestDuration.observe(s.duration, seconds);
        if (dryRun === '') sliDuration.observe(s.sli, seconds);
        if (labels.verb === 'GET' || labels.verb === 'LIST') {
          // Fastify keeps the headers it sent; a hijacked reply set them on the raw response.
          const header = ctx.reply.getHeader('content-length') ?? ctx.reply.raw.getHeader('content-length');
          const length = header === undefined ? NaN : Number(header);
          if (length >= 0) responseSizes.observe(s.sizes, length);
        }
      }
      if (debug()) log.debug({ method: ctx.request.method, url: ctx.request.url, code, ms: Math.round(seconds * 1000) }, 'request');
    });
    return next();
  };

  const inflight: Filter = async (ctx, next) => {
    const info = ctx.info;
    const verb = reportedVerb(ctx, info);
    if (isLongRunning(verb, info)) {
      // The resource label is known once the handler has found the type: counted from there.
      let counted: EndpointLabels | undefined;
      const count = () => {
        if (counted || ctx.metricResource === undefined) return;
        counted = endpointLabels(ctx);
        longRunning.inc(counted);
      };
      ctx.onMetricResource = count;
      ctx.reply.raw.once('close', () => {
        if (counted) longRunning.dec(counted);
      });
      return next();
    }
    // In flight until the handler has answered, as kube-apiserver's in-flight filter counts.
    const kind = verb === 'GET' || verb === 'LIST' ? 'readOnly' : 'mutating';
    inflightNow[kind]++;
    try {
      await next();
    } finally {
      inflightNow[kind]--;
    }
  };

  const watchEvents = (group: string, version: string, kind: string): WatchEventRecorder => {
    const events = watchEventsTotal.labels(group, version, kind);
    const sizes = watchEventsSizes.labels(group, version, kind);
    return (bytes) => {
      events.inc();
      sizes.observe(bytes);
    };
  };

  const etcdDuration = new Histogram({
    name: 'etcd_request_duration_seconds',
    help: 'Etcd request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'group', 'resource'],
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [registry],
  });
  const etcdRequest = (operation: string, key: string, seconds: number): void => {
    const groupEnd = key.indexOf('/', 1);
    const resourceEnd = key.indexOf('/', groupEnd + 1);
    if (groupEnd < 0 || resourceEnd < 0) return;
    const group = key.slice(1, groupEnd);
    etcdDuration.observe({ operation, group: group === 'core' ? '' : group, resource: key.slice(groupEnd + 1, resourceEnd) }, seconds);
  };

  const countObjects = (types: Registry): void => {
    new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
      labelNames: ['resource'],
      registers: [registry],
      collect() {
        this.reset();
        const seen = new Set<string>();
        for (const type of allTypes(types)) {
          const prefix = storagePrefix(type);
          if (seen.has(prefix)) continue;
          seen.add(prefix);
          let count: number;
          try {
            count = storage.count(prefix);
          } catch {
            count = -1;
          }
          this.set({ resource: type.group ? `${type.resource}.${type.group}` : type.resource }, count);
        }
      },
    });
  };

  return { registry, filter, inflight, watchEvents, etcdRequest, countObjects };
}

function* allTypes(types: Registry) {
  yield* types.resources('', 'v1');
  for (const group of types.groups()) for (const version of group.versions) yield* types.resources(group.name, version);
}
