// A container run as a thread of the node agent's process (src/cluster/node-agent/container-thread.ts),
// as the machine-config daemon and server are: the real `bosun` command in the thread, with the
// container's argv and environment as its own; its output (pino's lines too) in the container's
// CRI log, at CONTAINER_NICE below the agent's priority; SIGTERM reaches the component manager and
// it stops cleanly (exit 0); a kill past the grace period is reported as SIGKILL (137); a failing
// command exits 1 with its error in the log, and the agent's process lives on; its CPU time and
// memory reach the node's resource metrics. A pod's container
// runs as a thread when its subcommand is one of the agent's threadComponents, whatever its image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as api from '../../src/api/index.js';
import { logger } from '../../src/common/log.js';
import { CONTAINER_NICE } from '../../src/cluster/node-agent/container-process.js';
import { PodWorker } from '../../src/cluster/node-agent/pod-worker.js';
import { ContainerThread } from '../../src/cluster/node-agent/container-thread.js';
import { NodeMetrics } from '../../src/cluster/node-agent/metrics.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { freePort } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';

const logOf = (file: string) => { try { return readFileSync(file, 'utf8'); } catch { return ''; } };
/** The nice value of each of this process's threads (field 19 of /proc/self/task/<tid>/stat). */
const threadNices = () => readdirSync('/proc/self/task').map((tid) => { try { return Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]); } catch { return undefined; } });

test('a command run as a thread logs in the CRI format and exits with its code; a failing one exits 1 saying why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-thread-'));
  try {
    const ok = new ContainerThread({ argv: ['version'], env: { PATH: process.env.PATH ?? '' }, logFile: join(dir, 'v', '0.log') });
    assert.equal(ok.pid, undefined, 'a thread has no process of its own');
    assert.equal((await ok.exited).exitCode, 0);
    assert.match(logOf(join(dir, 'v', '0.log')), /^\S+ stdout F bosun \d+\.\d+\.\d+$/m);
    const bad = new ContainerThread({ argv: ['scheduler', '--metrics-listen', 'nowhere'], env: { PATH: process.env.PATH ?? '' }, logFile: join(dir, 'b', '0.log') });
    assert.equal((await bad.exited).exitCode, 1);
    assert.match(logOf(join(dir, 'b', '0.log')), /^\S+ stderr F error: --metrics-listen must be HOST:PORT/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a component run as a thread runs nicer than the agent, logs through pino, and stops on SIGTERM (exit 0) or is killed after its grace (137)', async () => {
  const api = await startTestApiServer({ port: 0 });
  const dir = mkdtempSync(join(tmpdir(), 'bosun-thread-'));
  try {
    const run = async (name: string) => {
      const logFile = join(dir, name, '0.log');
      const argv = ['scheduler', '--kubeconfig', api.kubeconfigPath, '--no-leader-elect', '--metrics-listen', `127.0.0.1:${await freePort()}`, '--health-listen', `127.0.0.1:${await freePort()}`];
      return { logFile, thread: new ContainerThread({ argv, env: { PATH: process.env.PATH ?? '', BOSUN_LOG_LEVEL: 'info' }, logFile }) };
    };
    const host = getPriority();
    const first = await run('first');
    await eventually('its pino lines in the log', () => /^\S+ stdout F \{.*"component":/m.test(logOf(first.logFile)), 30_000);
    assert.ok(threadNices().includes(Math.min(19, host + CONTAINER_NICE)), `a thread at nice ${host + CONTAINER_NICE}: ${threadNices().join(',')}`);
    assert.equal(getPriority(), host, 'the agent keeps its own priority');
    // Its usage in the node's resource metrics: the thread's CPU time and its isolate's memory.
    const usage = await eventually('its usage known', () => first.thread.usage(), 20_000);
    assert.ok(usage.memoryBytes > 1024 * 1024 && usage.cpuSeconds >= 0, JSON.stringify(usage));
    const metrics = new NodeMetrics('node-a', () => [{ namespace: 'default', name: 'sched', containers: [{ name: 'main', state: 'running', usage: () => first.thread.usage(), usageKey: first.thread.usageKey }] }]);
    const memory = Number(/^container_memory_working_set_bytes\{container="main",namespace="default",pod="sched"\} (\d+) /m.exec(metrics.resourceText())?.[1]);
    assert.ok(memory > 1024 * 1024, `container_memory_working_set_bytes ${memory}`);
    const stopped = await first.thread.stop(20_000);
    assert.equal(stopped.exitCode, 0, logOf(first.logFile));
    assert.equal(stopped.signal, undefined);
    assert.match(logOf(first.logFile), /"msg":"stopping"/);

    const second = await run('second');
    await eventually('the second started', () => /"component":/.test(logOf(second.logFile)), 30_000);
    const killed = await second.thread.stop(0);
    assert.deepEqual([killed.exitCode, killed.signal], [137, 'SIGKILL']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await api.stop();
  }
});

test("a pod's container runs as a thread when its subcommand is one of the agent's thread components, whatever its image", async () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-thread-pod-'));
  try {
    const pod = (name: string, command: string[]): api.Pod => ({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'default', uid: `4c1f8a52-0000-4000-8000-00000000000${name.length}` },
      spec: { automountServiceAccountToken: false, restartPolicy: 'Never', containers: [{ name: 'main', image: 'bosun.local/machine-config-operator:1.0.0', command }] },
    });
    const processes: string[][] = [];
    const run = async (p: api.Pod) => {
      const worker = new PodWorker(p, '127.1.9.2', {
        root, nodeName: 'node-a', nodeIP: '127.0.9.1', apiServer: { host: '127.0.0.1', port: '6443', caPem: '' },
        // A process, were one started: a command that prints what it was asked to run.
        componentCommand: (argv) => (processes.push(argv), ['/bin/echo', 'process', ...argv]), echoCommand: ['true'],
        threadComponents: new Set(['version']),
        backoff: { baseMs: 100, maxMs: 1000 }, events: { event: async () => undefined }, log: logger('pod-worker-test'), onChange: () => undefined,
      });
      worker.start();
      await eventually(`${p.metadata.name} terminated`, () => worker.records[0].state.terminated !== undefined, 30_000);
      await worker.stop(1000);
      return { exit: worker.records[0].state.terminated!.exitCode, log: logOf(worker.logFile('main', 0)) };
    };
    const asThread = await run(pod('thread', ['bosun', 'version']));
    assert.deepEqual([asThread.exit, processes.length], [0, 0], 'no process started');
    assert.match(asThread.log, /stdout F bosun \d+\.\d+\.\d+$/m);
    const asProcess = await run(pod('process', ['bosun', 'cluster-version-operator']));
    assert.equal(asProcess.exit, 0);
    assert.deepEqual(processes, [['cluster-version-operator']]);
    assert.match(asProcess.log, /stdout F process cluster-version-operator$/m);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
