// Disruption measured from outside the cluster's process: startObserver() runs observer.ts as a
// child process polling the backends (new and reused connections) and writing through the API;
// stop() ends it and returns what it saw. summarize() turns the report into disruption seconds per
// backend and connection mode; lostWrites() checks every acknowledged write against the cluster.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { seconds, type Outage } from './intervals.js';
import type { ObserverConfig, ObserverReport, WritesReport } from './observer.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { resources } from '../../../src/kube/resources.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const entry = fileURLToPath(new URL('./observer.ts', import.meta.url));

export interface Observer {
  process: ChildProcess;
  /** Ends the observation and returns the report. */
  stop(): Promise<ObserverReport>;
}

export async function startObserver(config: ObserverConfig): Promise<Observer> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, JSON.stringify(config)], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const check = () => { if (out.startsWith('observing\n')) { child.stdout!.off('data', check); resolve(); } };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`the disruption observer exited (${code}) before it started: ${out}`)));
  });
  return {
    process: child,
    async stop() {
      child.stdin!.end();
      const code = await exited;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) throw new Error(`the disruption observer exited (${code}) without a report: ${out.slice(-2000)}`);
      return JSON.parse(line) as ObserverReport;
    },
  };
}

export interface Disruption {
  backend: string;
  mode: 'new' | 'reused';
  seconds: number;
  /** Seconds counting answers slower than the observer's `slowMs` as disruption too. */
  slowOrDownSeconds: number;
  samples: number;
  failures: number;
  outages: Outage[];
  slowOrDown: Outage[];
}

/** Seconds of disruption per backend and connection mode. */
export function summarize(report: ObserverReport): Disruption[] {
  return report.pollers.map((p) => ({ backend: p.backend, mode: p.mode, seconds: seconds(p.outages), slowOrDownSeconds: seconds(p.slowOrDown), samples: p.samples, failures: p.failures, outages: p.outages, slowOrDown: p.slowOrDown }));
}

/** The disruption of one backend and mode; an error when it was not polled (callers name what they polled). */
export function disruptionOf(d: Disruption[], backend: string, mode: 'new' | 'reused'): Disruption {
  const found = d.find((x) => x.backend === backend && x.mode === mode);
  if (!found) throw new Error(`no poller for ${backend} (${mode})`);
  return found;
}

export interface WriteCheck {
  acknowledged: number;
  unacknowledged: number;
  /** Acknowledged creations whose ConfigMap is not there, and acknowledged counter values the final value is below. */
  lost: number;
  missing: string[];
  counter: number;
}

/** Every acknowledged write looked for in the cluster: each ConfigMap created, the counter at least at the last acknowledged value. */
export async function lostWrites(client: KubeClient, namespace: string, counter: string, writes: WritesReport): Promise<WriteCheck> {
  const present = new Set((await client.list(resources.configMaps, namespace)).items.map((c) => c.metadata?.name));
  const missing = writes.created.filter((n) => !present.has(n));
  const value = Number((await client.get(resources.configMaps, counter, namespace)).data?.value ?? 0);
  const lostUpdates = writes.updated.filter((v) => v > value).length;
  return { acknowledged: writes.created.length + writes.updated.length, unacknowledged: writes.unacknowledged, lost: missing.length + lostUpdates, missing, counter: value };
}

/** One line per backend and mode: "kube-api (new connections): 0.0 s in 2 outages, 3/1200 requests failed". */
export function describe(d: Disruption[]): string[] {
  return d.map((x) => `${x.backend} (${x.mode} connections): ${x.seconds.toFixed(1)} s (${x.slowOrDownSeconds.toFixed(1)} s counting answers slower than 3 s) in ${x.outages.length} outage${x.outages.length === 1 ? '' : 's'}, ${x.failures}/${x.samples} requests failed${x.outages.length ? ` (first: ${x.outages[0].error})` : ''}`);
}
