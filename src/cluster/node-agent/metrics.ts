// The node agent's metrics, under the kubelet's names (pkg/kubelet/metrics/metrics.go and
// collectors/resource_metrics.go), served on :10250 by logs-server.ts:
//
// - /metrics: `kubelet_node_name{node}`, `kubelet_running_pods` (pods with a running container),
//   `kubelet_running_containers{container_state}` (running, exited), and
//   `kubelet_pod_start_duration_seconds` (from the agent first seeing a pod to the pod running;
//   the kubelet's buckets).
// - /metrics/resource: what metrics-server reads — `node_`, `pod_` and `container_cpu_usage_seconds_total`
//   and `…_memory_working_set_bytes`, `container_start_time_seconds`, and `resource_scrape_error`
//   (with `scrape_error`, its deprecated name), each sample stamped with the time it was read.
//
// A container that runs as a process is measured from /proc (process-usage.ts): its process and
// all its descendants. A simulated container has no process: it reports zero, not an invented
// figure. "The node", on a local machine whose node agents share one host process, is the sum of
// the node's pod processes: its CPU counter adds what finished processes used when last seen, so
// that it only grows, and its working set is its pods' working sets.
import { Gauge, Histogram, Registry } from 'prom-client';
import type { ContainerRecord } from './pod-status.js';
import type { PodWorker } from './pod-worker.js';
import { readProcesses, treeUsage, type ProcessStat, type Usage } from './process-usage.js';

/** The kubelet's pod startup buckets (seconds). */
export const POD_START_DURATION_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

/** What a container is as the runtime would list it: running, or exited (stopped, or waiting to restart). */
export type ContainerState = 'running' | 'exited';

/** One container of a pod on the node, as the metrics see it. */
export interface ContainerView {
  name: string;
  state: ContainerState;
  /** The process, when the container runs as one. */
  pid?: number;
  /** What it uses, when it runs as a thread of the agent's process (container-thread.ts), and
   *  a key of its own for the node's CPU total (negative: no pid). */
  usage?: () => Usage | undefined;
  usageKey?: number;
  /** When it started (RFC 3339), when it is running. */
  startedAt?: string;
}

export interface PodView {
  namespace: string;
  name: string;
  containers: ContainerView[];
}

/**
 * The pods of the node's workers as the metrics see them: sidecars and app containers (init
 * containers that ran to completion are left out); a container not created yet is not counted.
 */
export function podViews(workers: Iterable<Pick<PodWorker, 'pod' | 'records' | 'inits' | 'pids'> & Partial<Pick<PodWorker, 'threads'>>>): PodView[] {
  const view = (w: Pick<PodWorker, 'pids'> & Partial<Pick<PodWorker, 'threads'>>, r: ContainerRecord): ContainerView[] => {
    const thread = w.threads?.get(r.name);
    if (r.state.running) return [{ name: r.name, state: 'running', pid: w.pids.get(r.name), startedAt: r.state.running.startedAt, ...(thread?.usage ? { usage: () => thread.usage?.(), usageKey: thread.usageKey } : {}) }];
    return r.state.terminated || r.containerID ? [{ name: r.name, state: 'exited' }] : [];
  };
  return [...workers].map((w) => ({
    namespace: w.pod.metadata.namespace ?? '',
    name: w.pod.metadata.name,
    containers: [...w.inits.filter((r) => r.restartable), ...w.records].flatMap((r) => view(w, r)),
  }));
}

/** The Prometheus text format's escaping of a label value. */
function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labels(pairs: Record<string, string>): string {
  return `{${Object.entries(pairs).map(([k, v]) => `${k}="${label(v)}"`).join(',')}}`;
}

const FAMILIES: Array<[name: string, type: 'counter' | 'gauge', help: string]> = [
  ['container_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the container in core-seconds'],
  ['container_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the container in bytes'],
  ['container_start_time_seconds', 'gauge', '[STABLE] Start time of the container since unix epoch in seconds'],
  ['node_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the node in core-seconds'],
  ['node_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the node in bytes'],
  ['pod_cpu_usage_seconds_total', 'counter', '[STABLE] Cumulative cpu time consumed by the pod in core-seconds'],
  ['pod_memory_working_set_bytes', 'gauge', '[STABLE] Current working set of the pod in bytes'],
  ['resource_scrape_error', 'gauge', '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise'],
  ['scrape_error', 'gauge', '[ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise'],
];

export class NodeMetrics {
  readonly registry = new Registry();
  private readonly podStart: Histogram;
  /** CPU seconds of each process (or thread, by a negative key) measured last, and what those gone since then had used. */
  private lastCpu = new Map<number, number>();
  private finishedCpu = 0;

  constructor(nodeName: string, private readonly pods: () => PodView[], private readonly proc = '/proc') {
    const r = [this.registry];
    new Gauge({ name: 'kubelet_node_name', help: "[ALPHA] The node's name. The count is always 1.", labelNames: ['node'], registers: r }).set({ node: nodeName }, 1);
    const views = () => this.pods();
    new Gauge({
      name: 'kubelet_running_pods', help: '[ALPHA] Number of pods that have a running pod sandbox', registers: r,
      collect() {
        this.set(views().filter((p) => p.containers.some((c) => c.state === 'running')).length);
      },
    });
    new Gauge({
      name: 'kubelet_running_containers', help: '[ALPHA] Number of containers currently running', labelNames: ['container_state'], registers: r,
      collect() {
        const counts: Record<ContainerState, number> = { running: 0, exited: 0 };
        for (const p of views()) for (const c of p.containers) counts[c.state]++;
        for (const [state, n] of Object.entries(counts)) this.set({ container_state: state }, n);
      },
    });
    this.podStart = new Histogram({
      name: 'kubelet_pod_start_duration_seconds', help: '[ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
      buckets: POD_START_DURATION_BUCKETS, registers: r,
    });
  }

  /** A pod ran for the first time, `seconds` after the agent first saw it. */
  observePodStart(seconds: number): void {
    this.podStart.observe(seconds);
  }

  /** /metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** /metrics/resource in the Prometheus text format, measured now. */
  resourceText(now = Date.now()): string {
    let processes: Map<number, ProcessStat> | undefined;
    try {
      processes = readProcesses(this.proc);
    } catch {
      // Reported as resource_scrape_error 1, every container at zero.
    }
    const samples = new Map<string, string[]>(FAMILIES.map(([name]) => [name, []]));
    const add = (name: string, pairs: Record<string, string> | undefined, value: number) =>
      samples.get(name)!.push(`${name}${pairs ? labels(pairs) : ''} ${value} ${now}`);
    const seen = new Map<number, number>();
    let nodeCpu = 0;
    let nodeMemory = 0;
    for (const pod of this.pods()) {
      const running = pod.containers.filter((c) => c.state === 'running');
      if (running.length === 0) continue;
      let podCpu = 0;
      let podMemory = 0;
      for (const c of running) {
        const usage: Usage = c.usage?.() ?? ((c.pid !== undefined && processes && treeUsage(c.pid, processes, this.proc)) || { cpuSeconds: 0, memoryBytes: 0 });
        const key = c.usage ? c.usageKey : c.pid;
        if (key !== undefined) seen.set(key, usage.cpuSeconds);
        const ids = { container: c.name, namespace: pod.namespace, pod: pod.name };
        add('container_cpu_usage_seconds_total', ids, usage.cpuSeconds);
        add('container_memory_working_set_bytes', ids, usage.memoryBytes);
        if (c.startedAt) add('container_start_time_seconds', ids, Date.parse(c.startedAt) / 1000);
        podCpu += usage.cpuSeconds;
        podMemory += usage.memoryBytes;
      }
      add('pod_cpu_usage_seconds_total', { namespace: pod.namespace, pod: pod.name }, podCpu);
      add('pod_memory_working_set_bytes', { namespace: pod.namespace, pod: pod.name }, podMemory);
      nodeCpu += podCpu;
      nodeMemory += podMemory;
    }
    // Processes measured before and gone now keep counting in the node's total.
    for (const [pid, cpu] of this.lastCpu) if (!seen.has(pid)) this.finishedCpu += cpu;
    this.lastCpu = seen;
    add('node_cpu_usage_seconds_total', undefined, this.finishedCpu + nodeCpu);
    add('node_memory_working_set_bytes', undefined, nodeMemory);
    const failed = processes ? 0 : 1;
    samples.get('resource_scrape_error')!.push(`resource_scrape_error ${failed}`);
    samples.get('scrape_error')!.push(`scrape_error ${failed}`);
    const out: string[] = [];
    for (const [name, type, help] of FAMILIES) {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.get(name)!);
    }
    return `${out.join('\n')}\n`;
  }
}
