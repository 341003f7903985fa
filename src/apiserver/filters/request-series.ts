// Counter and histogram families for the API server's per-request metrics, served through a
// prom-client registry like any other metric but recorded without prom-client's per-call work:
// prom-client validates and hashes the label set on every inc()/observe(), even through a child
// from labels(), which for four families of nine labels cost more per request than the rest of
// the metrics together (npm run bench:apiserver, metrics on vs off). Here a series is found once
// (by the caller's key) and recording is a few additions. The exposition is prom-client's: the
// registry formats what get() returns, as it does for its own histograms (cumulative `_bucket`
// with `le`, `+Inf`, `_sum`, `_count`).
import type { Metric, Registry } from 'prom-client';

type Labels = Record<string, string>;
interface Value { value: number; labels: Labels; metricName?: string }

/** One family: its series by key, and what prom-client's registry reads from it. */
abstract class Family<S extends { labels: Labels }> {
  readonly aggregator = 'sum';
  private readonly series = new Map<string, S>();
  abstract readonly type: 'counter' | 'histogram';

  constructor(readonly name: string, readonly help: string, registry: Registry) {
    // Registered as prom-client registers its own: the registry only calls name, help, type and get().
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series for `key` (the caller's encoding of `labels`), made on first use. */
  seriesFor(key: string, labels: Labels): S {
    let s = this.series.get(key);
    if (!s) {
      s = this.create(labels);
      this.series.set(key, s);
    }
    return s;
  }

  protected abstract create(labels: Labels): S;
  protected abstract values(s: S): Value[];

  collect(): void {}

  reset(): void {
    this.series.clear();
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Value[] }> {
    const values: Value[] = [];
    for (const s of this.series.values()) values.push(...this.values(s));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export interface CounterSeries { labels: Labels; value: number }

export class SeriesCounter extends Family<CounterSeries> {
  readonly type = 'counter';
  protected create(labels: Labels): CounterSeries {
    return { labels, value: 0 };
  }
  protected values(s: CounterSeries): Value[] {
    return [{ value: s.value, labels: s.labels }];
  }
}

export interface HistogramSeries {
  labels: Labels;
  /** Observations per bucket (not cumulative); the last is above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class SeriesHistogram extends Family<HistogramSeries> {
  readonly type = 'histogram';

  constructor(name: string, help: string, private readonly bounds: readonly number[], registry: Registry) {
    super(name, help, registry);
  }

  protected create(labels: Labels): HistogramSeries {
    return { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
  }

  observe(s: HistogramSeries, value: number): void {
    let i = 0;
    // Latencies and sizes mostly fall in the first buckets: a forward scan ends early.
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    s.counts[i]++;
    s.sum += value;
    s.count++;
  }

  protected values(s: HistogramSeries): Value[] {
    // A series found but never observed (a WATCH's latency) is not exposed, as with prom-client.
    if (s.count === 0) return [];
    const bucket = `${this.name}_bucket`;
    const out: Value[] = [];
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += s.counts[i];
      out.push({ value: cumulative, labels: { ...s.labels, le: String(this.bounds[i]) }, metricName: bucket });
    }
    out.push({ value: s.count, labels: { ...s.labels, le: '+Inf' }, metricName: bucket });
    out.push({ value: s.sum, labels: s.labels, metricName: `${this.name}_sum` });
    out.push({ value: s.count, labels: s.labels, metricName: `${this.name}_count` });
    return out;
  }
}
