// The node agent's metrics over a /proc laid out in a directory: /proc/<pid>/stat parsed from the
// last `)` (commands with spaces and parentheses), a container's CPU and working set summed over
// its process tree (children's times and finished children's cutime/cstime), a simulated container
// at zero, the node's CPU counter that keeps what ended processes used; the kubelet's subresource
// for each path; and the pod views (sidecars counted, waiting containers not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStat, processTree, readProcesses, parseRssBytes } from '../../src/cluster/node-agent/process-usage.js';
import { NodeMetrics, podViews, type PodView } from '../../src/cluster/node-agent/metrics.js';
import { kubeletSubresource } from '../../src/cluster/node-agent/logs-server.js';
import { parseSamples } from '../../src/metrics-server/prometheus-text.js';

/** A stat line: utime, stime, cutime, cstime in ticks (100 a second). */
const stat = (pid: number, comm: string, ppid: number, [ut, st, cut, cst]: number[]) =>
  `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194304 1 0 0 0 ${ut} ${st} ${cut} ${cst} 20 0 1 0 100 1000 10 18446744073709551615\n`;

function fakeProc(processes: Array<{ pid: number; ppid: number; comm?: string; ticks: number[]; rssKb: number }>): string {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-proc-'));
  for (const p of processes) {
    mkdirSync(join(dir, String(p.pid)));
    writeFileSync(join(dir, String(p.pid), 'stat'), stat(p.pid, p.comm ?? 'node', p.ppid, p.ticks));
    writeFileSync(join(dir, String(p.pid), 'status'), `Name:\tnode\nVmRSS:\t  ${p.rssKb} kB\nThreads:\t1\n`);
  }
  mkdirSync(join(dir, 'self'));
  return dir;
}

test('/proc/<pid>/stat and status: fields counted from the last ")", CPU in seconds, VmRSS in bytes', () => {
  assert.deepEqual(parseStat(stat(42, 'a (weird) name', 7, [150, 50, 20, 30])), { pid: 42, ppid: 7, cpuSeconds: 2.5 });
  assert.equal(parseStat('garbage'), undefined);
  assert.equal(parseRssBytes('VmRSS:\t 1024 kB\n'), 1024 * 1024);
  assert.equal(parseRssBytes('State: Z (zombie)\n'), 0);
});

test('a container is its process tree; the node sums its pods and keeps what finished processes used; a simulated container is zero', () => {
  const proc = fakeProc([
    { pid: 100, ppid: 1, ticks: [10, 10, 30, 0], rssKb: 1000 },
    { pid: 101, ppid: 100, ticks: [100, 0, 0, 0], rssKb: 2000 },
    { pid: 102, ppid: 101, comm: 'spin (child)', ticks: [50, 50, 0, 0], rssKb: 500 },
    { pid: 200, ppid: 1, ticks: [1000, 0, 0, 0], rssKb: 9999 },
  ]);
  try {
    assert.deepEqual(processTree(100, readProcesses(proc)).sort(), [100, 101, 102]);
    let pods: PodView[] = [
      { namespace: 'ns', name: 'real', containers: [{ name: 'main', state: 'running', pid: 100, startedAt: '2026-01-01T00:00:00Z' }] },
      { namespace: 'ns', name: 'sim', containers: [{ name: 'main', state: 'running' }] },
    ];
    const metrics = new NodeMetrics('n1', () => pods, proc);
    const at = 1_700_000_000_000;
    const samples = parseSamples(metrics.resourceText(at));
    const get = (name: string, labels: Record<string, string> = {}) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    // (10+10+30) + 100 + (50+50) ticks = 2.5 s; 1000 + 2000 + 500 kB.
    assert.deepEqual(get('container_cpu_usage_seconds_total', { pod: 'real' }), { name: 'container_cpu_usage_seconds_total', labels: { container: 'main', namespace: 'ns', pod: 'real' }, value: 2.5, timestampMs: at });
    assert.equal(get('container_memory_working_set_bytes', { pod: 'real' })?.value, 3500 * 1024);
    assert.equal(get('container_start_time_seconds', { pod: 'real' })?.value, Date.parse('2026-01-01T00:00:00Z') / 1000);
    assert.equal(get('container_cpu_usage_seconds_total', { pod: 'sim' })?.value, 0);
    assert.equal(get('pod_memory_working_set_bytes', { pod: 'sim' })?.value, 0);
    assert.equal(get('node_cpu_usage_seconds_total')?.value, 2.5);
    assert.equal(get('node_memory_working_set_bytes')?.value, 3500 * 1024);
    assert.equal(get('resource_scrape_error')?.value, 0);
    // The pod is gone: the node's counter keeps its 2.5 s.
    pods = [];
    assert.equal(parseSamples(metrics.resourceText(at + 1000)).find((s) => s.name === 'node_cpu_usage_seconds_total')?.value, 2.5);
    // /proc unreadable: an error, every figure zero rather than invented.
    const broken = new NodeMetrics('n1', () => [{ namespace: 'ns', name: 'real', containers: [{ name: 'main', state: 'running', pid: 100 }] }], join(proc, 'missing'));
    const failed = parseSamples(broken.resourceText(at));
    assert.equal(failed.find((s) => s.name === 'resource_scrape_error')?.value, 1);
    assert.equal(failed.find((s) => s.name === 'container_cpu_usage_seconds_total')?.value, 0);
  } finally {
    rmSync(proc, { recursive: true, force: true });
  }
});

test('/metrics: kubelet_running_pods, kubelet_running_containers by state, kubelet_node_name', async () => {
  const metrics = new NodeMetrics('n1', () => [
    { namespace: 'a', name: 'up', containers: [{ name: 'x', state: 'running' }, { name: 'y', state: 'exited' }] },
    { namespace: 'a', name: 'down', containers: [{ name: 'x', state: 'exited' }] },
  ]);
  metrics.observePodStart(0.7);
  const samples = parseSamples(await metrics.text());
  const value = (name: string, labels: Record<string, string> = {}) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  assert.equal(value('kubelet_running_pods'), 1);
  assert.equal(value('kubelet_running_containers', { container_state: 'running' }), 1);
  assert.equal(value('kubelet_running_containers', { container_state: 'exited' }), 2);
  assert.equal(value('kubelet_node_name', { node: 'n1' }), 1);
  assert.equal(value('kubelet_pod_start_duration_seconds_bucket', { le: '0.5' }), 0);
  assert.equal(value('kubelet_pod_start_duration_seconds_bucket', { le: '1' }), 1);
});

test('the kubelet\'s subresource for a path, as its auth.go maps them', () => {
  const table: Array<[string, string]> = [
    ['/metrics', 'metrics'], ['/metrics/resource', 'metrics'], ['/metrics/cadvisor', 'metrics'], ['/stats/summary', 'stats'],
    ['/logs/', 'log'], ['/spec', 'spec'], ['/containerLogs/ns/p/c', 'proxy'], ['/metricsx', 'proxy'], ['/pods', 'proxy'],
  ];
  for (const [path, subresource] of table) assert.equal(kubeletSubresource(path), subresource, path);
});

test('pod views: running containers with their pids, exited or restarting ones as exited, not-yet-created ones left out, sidecars counted', () => {
  const record = (name: string, state: object, containerID = '') => ({ name, image: 'i', containerID, restartCount: 0, state, lastState: {}, ready: false, started: false });
  const views = podViews([{
    pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } },
    pids: new Map([['app', 7]]),
    inits: [{ ...record('init', { terminated: { exitCode: 0 } }, 'id0'), restartable: false }, { ...record('sidecar', { running: { startedAt: 't' } }, 'id1'), restartable: true }],
    records: [record('app', { running: { startedAt: 't' } }, 'id2'), record('crashing', { waiting: { reason: 'CrashLoopBackOff' } }, 'id3'), record('new', { waiting: { reason: 'ContainerCreating' } })],
  }]);
  assert.deepEqual(views, [{ namespace: 'ns', name: 'p', containers: [
    { name: 'sidecar', state: 'running', pid: undefined, startedAt: 't' },
    { name: 'app', state: 'running', pid: 7, startedAt: 't' },
    { name: 'crashing', state: 'exited' },
  ] }]);
});
