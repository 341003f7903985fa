// From two scrapes of a node's /metrics/resource to the metrics.k8s.io figures, as metrics-server
// computes them: CPU as the rate of the cumulative CPU seconds between the two samples (in
// nanocores, `123456n`), memory as the latest working set (in `Ki`), the window as the time
// between the samples and the timestamp as the later one. A container whose counter went down
// (restarted) or whose start time changed has no rate until the next scrape. Pure.
import type { Sample } from './prometheus-text.js';

/** One point of a cumulative CPU counter and a working set. */
export interface Point {
  cpuSeconds: number;
  memoryBytes: number;
  timestampMs: number;
  /** Containers only: when the container started (s), to tell a restart from a counter. */
  startTime?: number;
}

export interface NodeScrape {
  node?: Point;
  /** `namespace/pod` → container name → point. */
  pods: Map<string, Map<string, Point>>;
}

/** The points of one scrape, at `scrapedAtMs` where a sample carries no time of its own. */
export function pointsOf(samples: Sample[], scrapedAtMs: number): NodeScrape {
  const pods = new Map<string, Map<string, Point>>();
  const node: Partial<Point> = {};
  const point = (s: Sample): Point => {
    const key = `${s.labels.namespace}/${s.labels.pod}`;
    let containers = pods.get(key);
    if (!containers) pods.set(key, (containers = new Map()));
    let p = containers.get(s.labels.container);
    if (!p) containers.set(s.labels.container, (p = { cpuSeconds: NaN, memoryBytes: NaN, timestampMs: scrapedAtMs }));
    return p;
  };
  for (const s of samples) {
    const at = s.timestampMs ?? scrapedAtMs;
    switch (s.name) {
      case 'node_cpu_usage_seconds_total':
        node.cpuSeconds = s.value;
        node.timestampMs = at;
        break;
      case 'node_memory_working_set_bytes':
        node.memoryBytes = s.value;
        break;
      case 'container_cpu_usage_seconds_total':
        Object.assign(point(s), { cpuSeconds: s.value, timestampMs: at });
        break;
      case 'container_memory_working_set_bytes':
        point(s).memoryBytes = s.value;
        break;
      case 'container_start_time_seconds':
        point(s).startTime = s.value;
        break;
    }
  }
  for (const containers of pods.values()) for (const [name, p] of containers) if (Number.isNaN(p.cpuSeconds) || Number.isNaN(p.memoryBytes)) containers.delete(name);
  const whole = node.cpuSeconds !== undefined && node.memoryBytes !== undefined && node.timestampMs !== undefined;
  return { node: whole ? (node as Point) : undefined, pods };
}

export interface Usage {
  /** CPU in cores. */
  cpuCores: number;
  memoryBytes: number;
  timestampMs: number;
  windowMs: number;
}

/** The usage between two points of one counter; undefined when there is no rate yet. */
export function usageBetween(earlier: Point | undefined, later: Point | undefined): Usage | undefined {
  if (!earlier || !later) return undefined;
  const windowMs = later.timestampMs - earlier.timestampMs;
  if (windowMs <= 0 || later.cpuSeconds < earlier.cpuSeconds) return undefined;
  if (earlier.startTime !== undefined && later.startTime !== undefined && earlier.startTime !== later.startTime) return undefined;
  return { cpuCores: (later.cpuSeconds - earlier.cpuSeconds) / (windowMs / 1000), memoryBytes: later.memoryBytes, timestampMs: later.timestampMs, windowMs };
}

/** CPU as metrics-server writes it: whole nanocores, `123456n`. */
export function formatCpu(cores: number): string {
  return `${Math.round(cores * 1e9)}n`;
}

/** Memory as metrics-server writes it: whole kibibytes, `1234Ki`. */
export function formatMemory(bytes: number): string {
  return `${Math.round(bytes / 1024)}Ki`;
}

/** A window as a Go duration (`15.002s`). */
export function formatWindow(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}
