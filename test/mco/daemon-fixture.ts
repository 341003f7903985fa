// A local cluster for the machine-config daemon's scenarios: the node agents' cluster (API server,
// local cloud, node agents; test/cluster/node-agent-fixture.ts) plus the machine-config CRDs, the
// payload's machine-config namespace, service accounts and RBAC, the master and worker pools, the
// machine-config controller (render, node and drain controllers), the DaemonSet, ReplicaSet and
// Deployment controllers and the scheduler. Workers boot from the worker pool's rendered config as
// the machine-config server serves it (with node-annotations.json and a bootstrap kubeconfig).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repositoryRoot } from '../../src/cli/release.js';
import { Manager, resources, type Obj } from '../../src/kube/index.js';
import { addScheduler } from '../../src/cluster/scheduler/scheduler.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { runMachineConfigController } from '../../src/mco/controller/run.js';
import { servedConfig } from '../../src/mco/server/served-config.js';
import { MachineConfigDaemon, type DaemonSettings } from '../../src/mco/daemon/daemon.js';
import { RootMountHost } from '../../src/mco/daemon/host.js';
import type { Instance } from '../../src/cloud/types.js';
import { eventually } from '../helpers/eventually.js';
import { bootstrapUserData, bootWorker, startNodeCluster, type NodeCluster, type NodeClusterOptions } from '../cluster/node-agent-fixture.js';
import { builtInPools, controllerConfig } from './controller-fixtures.js';

export const MCO_NS = 'openshift-machine-config-operator';
export const A = {
  current: 'machineconfiguration.openshift.io/currentConfig',
  desired: 'machineconfiguration.openshift.io/desiredConfig',
  state: 'machineconfiguration.openshift.io/state',
  reason: 'machineconfiguration.openshift.io/reason',
};

export interface McoCluster extends NodeCluster {
  /** Boots a worker from the pool's current rendered config, with extra files Ignition writes (not managed). */
  bootWorker(name: string, files?: Record<string, string>): Promise<Instance>;
  rootOf(instance: Instance): string;
  node(name: string): Promise<Obj>;
  /** Runs a daemon in this process against a machine's root until the cluster closes or stop() is
   *  called; stop() aborts at once (the running pass takes no further step) and resolves once it has wound down. */
  runDaemon(nodeName: string, instance: Instance, o?: { driftCheckIntervalMs?: number; drainTimeoutMs?: number; afterStep?: DaemonSettings['afterStep'] }): { stop(): Promise<void> };
  /** Waits for the worker pool to have rendered a config other than those given, and returns its name. */
  renderedWorker(not?: string[]): Promise<string>;
  /** Waits until every worker node is Done on `config` and the pool is Updated. */
  workersDoneOn(config: string, timeoutMs?: number): Promise<void>;
}

export interface McoClusterOptions extends NodeClusterOptions {
  workerMaxUnavailable?: number;
  /** The install's keys for `core` (99-<role>-ssh); none by default, as `bosun start` installs. */
  sshAuthorizedKeys?: string[];
}

export async function startMcoCluster(o: McoClusterOptions = {}): Promise<McoCluster> {
  const c = await startNodeCluster({ bootDelayMs: 300, ...o });
  const stop = new AbortController();
  const running: Promise<unknown>[] = [];
  const kubeconfig = c.kube.kubeconfig;
  const dir = join(repositoryRoot, 'release-payload/manifests');
  for (const file of readdirSync(dir).filter((f) => f.startsWith('0000_80_machine-config_01_') && f.endsWith('.crd.yaml'))) {
    await c.kube.create(resources.customResourceDefinitions, parseYaml(readFileSync(join(dir, file), 'utf8')));
  }
  // The metrics Services too: the service CA (run below) writes the daemon's serving certificate
  // (Secret proxy-tls) that its pod mounts, as on a cluster.
  for (const file of ['0000_80_machine-config_00_namespace.yaml', '0000_80_machine-config_03_service-accounts.yaml', '0000_80_machine-config_04_rbac.yaml', '0000_80_machine-config_04_metrics.yaml']) {
    await c.api.kubectlOk(['apply', '-f', join(dir, file)]);
  }
  await eventually('machine-config CRDs served', () => c.kube.list(resources.machineConfigPools).then(() => true, () => false));
  await c.kube.create(resources.controllerConfigs, controllerConfig({ kubeAPIServerServingCAData: Buffer.from(c.api.caPem).toString('base64') }));
  for (const pool of builtInPools(o.workerMaxUnavailable)) await c.kube.create(resources.machineConfigPools, pool);

  running.push(runMachineConfigController({ kubeconfig, signal: stop.signal, sshAuthorizedKeys: o.sshAuthorizedKeys, leaderElection: false, renderDelayMs: 50, controllerVersion: 'test', drainTiming: { retryMs: 1000, slowRetryMs: 2000, thresholdMs: 5000 } }));
  running.push(runWorkloadControllers({ kubeconfig, signal: stop.signal, leaderElection: false, controllers: ['daemonset', 'replicaset', 'deployment', 'service-ca'] }));
  const scheduler = new Manager({ name: 'scheduler', kubeconfig });
  addScheduler(scheduler);
  running.push(scheduler.start(stop.signal));

  const m: McoCluster = Object.assign(Object.create(Object.getPrototypeOf(c)), c, {
    async bootWorker(name: string, files: Record<string, string> = {}) {
      const pool = await eventually('a rendered worker config', async () => (await c.kube.get(resources.machineConfigPools, 'worker')).spec?.configuration?.name as string | undefined);
      const rendered = await c.kube.get(resources.machineConfigs, pool);
      // The bootstrap kubeconfig from a token the machine approver will honour (the fixture makes both).
      const bootstrap = JSON.parse(await bootstrapUserData(c)).storage.files.find((f: Obj) => f.path === '/etc/kubernetes/kubeconfig');
      const config = servedConfig({ name: pool, config: rendered.spec!.config } as never, undefined) as Obj;
      config.storage.files.push(bootstrap);
      for (const [path, text] of Object.entries(files)) config.storage.files.push({ path, mode: 0o644, overwrite: true, contents: { source: `data:;base64,${Buffer.from(text).toString('base64')}` } });
      return bootWorker(c, name, JSON.stringify(config));
    },
    rootOf: (i: Instance) => join(c.dataDir, 'machines', i.id, 'root'),
    node: (name: string) => c.kube.get(resources.nodes, name),
    runDaemon(nodeName: string, instance: Instance, o: { driftCheckIntervalMs?: number; drainTimeoutMs?: number; afterStep?: DaemonSettings['afterStep'] } = {}) {
      const own = new AbortController();
      stop.signal.addEventListener('abort', () => own.abort(), { once: true });
      const manager = new Manager({ name: `machine-config-daemon-${nodeName}`, kubeconfig, eventSource: 'machineconfigdaemon' });
      manager.add(new MachineConfigDaemon(manager, { nodeName, host: new RootMountHost(m.rootOf(instance)), driftCheckIntervalMs: o.driftCheckIntervalMs ?? 500, drainTimeoutMs: o.drainTimeoutMs, afterStep: o.afterStep }));
      const done = manager.start(own.signal);
      running.push(done);
      return { async stop() { own.abort(); await done.catch(() => undefined); } };
    },
    async renderedWorker(not: string[] = []) {
      return eventually('a new rendered worker config', async () => {
        const name = (await c.kube.get(resources.machineConfigPools, 'worker')).spec?.configuration?.name as string | undefined;
        return name && !not.includes(name) ? name : undefined;
      }, 20_000);
    },
    async workersDoneOn(config: string, timeoutMs = 40_000) {
      let seen = '';
      await eventually(`workers Done on ${config}`, async () => {
        const pool = await c.kube.get(resources.machineConfigPools, 'worker');
        const nodes = (await c.kube.list(resources.nodes)).items;
        const workers = nodes.filter((n) => 'node-role.kubernetes.io/worker' in (n.metadata.labels ?? {}));
        const done = workers.every((n) => n.metadata.annotations?.[A.current] === config && n.metadata.annotations?.[A.state] === 'Done' && !n.spec?.unschedulable);
        const updated = pool.status?.conditions?.some((x) => x.type === 'Updated' && x.status === 'True') && pool.status?.configuration?.name === config;
        seen = workers.map((n) => `${n.metadata.name}: ${n.metadata.annotations?.[A.state]} ${n.metadata.annotations?.[A.current]} → ${n.metadata.annotations?.[A.desired]}${n.spec?.unschedulable ? ' cordoned' : ''} ${n.metadata.annotations?.[A.reason] ?? ''}`).join('\n');
        return workers.length > 0 && done && updated;
      }, { timeoutMs, detail: () => seen });
    },
    async close() {
      stop.abort();
      await Promise.allSettled(running);
      await c.close();
    },
  });
  return m;
}
