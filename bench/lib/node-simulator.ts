// One of bench:nodes' simulator processes: `count` simulated nodes from `firstIndex` on
// (src/cluster/node-agent/scale.ts) against the API server of a kubeconfig, driven by its parent
// over the IPC channel (child_process.fork):
//   → { registered: true }                      once every node has registered and renews
//   ← 'measure'                                  starts the measured window: forgets the renewals so far
//   ← 'report'  → { latencies, cpuMs, rssMiB, loopDelayP99Ms, loopDelayMaxMs }  the window's figures
//   ← 'stop'    → { stopped: true }              stops every node (their Nodes stay), then exits
//
//   node --import tsx bench/lib/node-simulator.ts <kubeconfig> <count> <first index> <renew ms>
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { logger, setLogLevel } from '../../src/common/log.js';
import { SimulatedNodes } from '../../src/cluster/node-agent/scale.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/index.js';

export interface SimulatorReport {
  latencies: number[];
  cpuMs: number;
  rssMiB: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

const [kubeconfig, count, firstIndex, renewMs] = process.argv.slice(2);
if (!kubeconfig || !process.send) {
  console.error('usage: node --import tsx bench/lib/node-simulator.ts <kubeconfig> <count> <first index> <renew ms> (started by bench/nodes.ts with an IPC channel)');
  process.exit(2);
}
setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'warn');
const send = (message: unknown) => process.send!(message);

let latencies: number[] = [];
let cpuStart = process.cpuUsage();
let loopDelay: IntervalHistogram | undefined;
const sim = new SimulatedNodes(new KubeClient(loadKubeConfig(kubeconfig)), {
  count: Number(count),
  firstIndex: Number(firstIndex),
  leaseRenewIntervalMs: Number(renewMs),
  onLeaseRenewed: (ms) => latencies.push(ms),
  log: logger('bench-nodes'),
});
process.on('message', (message) => {
  if (message === 'measure') {
    latencies = [];
    cpuStart = process.cpuUsage();
    loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
  } else if (message === 'report') {
    loopDelay?.disable();
    const cpu = process.cpuUsage(cpuStart);
    const report: SimulatorReport = {
      latencies, cpuMs: (cpu.user + cpu.system) / 1000, rssMiB: process.memoryUsage().rss / 1024 / 1024,
      loopDelayP99Ms: (loopDelay?.percentile(99) ?? 0) / 1e6, loopDelayMaxMs: (loopDelay?.max ?? 0) / 1e6,
    };
    send(report);
  } else if (message === 'stop') {
    void sim.stop().then(() => {
      send({ stopped: true });
      process.disconnect();
    });
  }
});
// The parent gone (^C), this process goes too.
process.on('disconnect', () => process.exit(0));
await sim.start();
send({ registered: true });
