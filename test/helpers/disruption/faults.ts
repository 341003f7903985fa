// Seeded faults injected into a whole local cluster while it upgrades, bounded in count and time:
// planFaults() draws from a seed which faults happen and when (each kind at most once, all within
// the window); injectFaults() carries the plan out against a running cluster until the window
// ends or it is told to stop, and reports what it did to what. The same seed gives the same plan,
// so a failed run can be replayed; what a fault hits (which pod, which worker) is also drawn from
// the seed among what exists at that moment.
//
// The faults:
// - operator-pod-killed: the container process of a running operator pod SIGKILLed (its node
//   agent restarts it);
// - apiserver-killed: an API server's process SIGKILLed (where the cluster runs API servers as
//   processes of their own: the HA control plane of `bosun start --etcd`; its supervisor restarts it);
// - worker-terminated: a worker's instance terminated in the cloud (its MachineHealthCheck has it
//   replaced);
// - reboot-mid-drain: the instance of a node being drained for its new config rebooted;
// - cloud-restarted: the local cloud's API down and back (`restartCloud` hook).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { prng } from '../prng.js';
import { sleep } from '../../../src/common/sleep.js';
import type { CloudClient } from '../../../src/cloud/client.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { resources } from '../../../src/kube/resources.js';

export const FAULT_KINDS = ['operator-pod-killed', 'apiserver-killed', 'worker-terminated', 'reboot-mid-drain', 'cloud-restarted'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface PlannedFault {
  kind: FaultKind;
  /** Milliseconds after the injection starts. */
  atMs: number;
}

export interface FaultPlanOptions {
  seed: number;
  kinds: readonly FaultKind[];
  /** Every fault starts within this many ms of the start. */
  windowMs: number;
  /** At most this many faults (default: one of each kind). */
  maxCount?: number;
}

/** Which faults, when: each kind at most once, in a seeded order, at seeded times within the window. Pure. */
export function planFaults(o: FaultPlanOptions): PlannedFault[] {
  const random = prng(o.seed);
  const kinds = [...o.kinds];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const chosen = kinds.slice(0, o.maxCount ?? kinds.length);
  return chosen.map((kind) => ({ kind, atMs: Math.floor(random() * o.windowMs) })).sort((a, b) => a.atMs - b.atMs);
}

export interface FaultTarget {
  kube: KubeClient;
  cloud: CloudClient;
  /** The cluster's data directory: its pods' processes run under it. */
  dataDir: string;
  /** Namespaces whose pods count as operator pods. */
  operatorNamespaces: string[];
  /** Restarts the local cloud's API; absent when the cluster's cloud cannot be restarted from here. */
  restartCloud?: () => Promise<string>;
}

export interface InjectedFault {
  kind: FaultKind;
  /** When it was done, ms after the injection started. */
  atMs: number;
  /** What it hit, or why nothing was. */
  detail: string;
  injected: boolean;
}

/** Each process this user may read under /proc, with what `read` makes of it (a process gone, or another user's, is left out). */
function processes<T>(read: (pid: number) => T | undefined): Array<{ pid: number; value: T }> {
  const out: Array<{ pid: number; value: T }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const value = read(Number(entry));
      if (value !== undefined) out.push({ pid: Number(entry), value });
    } catch {
      // gone, or another user's
    }
  }
  return out;
}

/** The pids of the container processes of each pod under `dataDir`, by pod UID (they run in the pod's directory): one pass over /proc. */
export function podPidsByUid(dataDir: string): Map<string, number[]> {
  const byUid = new Map<string, number[]>();
  const inPods = processes((pid) => {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd.startsWith(dataDir) ? /\/pods\/([^/]+)/.exec(cwd.slice(dataDir.length))?.[1] : undefined;
  });
  for (const { pid, value: uid } of inPods) byUid.set(uid, [...(byUid.get(uid) ?? []), pid]);
  return byUid;
}

/** The pids of the API servers that run as processes of their own under `dataDir` (the HA control plane's second and later). */
export function apiServerPids(dataDir: string): number[] {
  return processes((pid) => {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const at = argv.indexOf('--data-dir');
    return argv.includes('apiserver') && at > 0 && argv[at + 1].startsWith(`${dataDir}/apiserver-`) ? true : undefined;
  }).map((p) => p.pid);
}

/** Carries `plan` out against `target`; stops early (skipping what is left) once `until` resolves. */
export async function injectFaults(target: FaultTarget, plan: PlannedFault[], seed: number, until: Promise<unknown>): Promise<InjectedFault[]> {
  const random = prng(seed ^ 0x5eed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const started = Date.now();
  let over = false;
  void until.finally(() => { over = true; });
  const done: InjectedFault[] = [];
  for (const f of plan) {
    while (!over && Date.now() - started < f.atMs) await sleep(100);
    if (over) { done.push({ kind: f.kind, atMs: Date.now() - started, detail: 'not injected: the upgrade was over', injected: false }); continue; }
    let detail: string | undefined;
    try {
      detail = await inject(f.kind, target, pick, () => over);
    } catch (e) {
      detail = `failed: ${(e as Error).message}`;
    }
    done.push({ kind: f.kind, atMs: Date.now() - started, detail: detail ?? 'nothing to hit', injected: detail !== undefined && !detail.startsWith('failed') && !detail.startsWith('not injected') });
  }
  return done;
}

async function inject(kind: FaultKind, t: FaultTarget, pick: <T>(xs: T[]) => T, over: () => boolean): Promise<string | undefined> {
  switch (kind) {
    case 'operator-pod-killed': {
      const listed = (await Promise.all(t.operatorNamespaces.map(async (ns) => (await t.kube.list(resources.pods, ns)).items))).flat();
      const pidsOf = podPidsByUid(t.dataDir);
      const pods = listed.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp && pidsOf.has(p.metadata!.uid!));
      if (pods.length === 0) return undefined;
      const pod = pick(pods);
      const pids = pidsOf.get(pod.metadata!.uid!)!;
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      return `SIGKILL to ${pod.metadata!.namespace}/${pod.metadata!.name} (pid ${pids.join(', ')}) on ${pod.spec?.nodeName}`;
    }
    case 'apiserver-killed': {
      const pids = apiServerPids(t.dataDir);
      if (pids.length === 0) return 'not injected: this cluster runs no API server process of its own (bosun start --etcd does)';
      const pid = pick(pids);
      process.kill(pid, 'SIGKILL');
      return `SIGKILL to the API server process ${pid}`;
    }
    case 'worker-terminated': {
      const workers = (await t.kube.list(resources.nodes)).items.filter((n) => n.metadata?.labels?.['node-role.kubernetes.io/worker'] !== undefined && n.metadata?.labels?.['node-role.kubernetes.io/master'] === undefined && n.spec?.providerID);
      if (workers.length === 0) return undefined;
      const victim = pick(workers);
      const id = victim.spec!.providerID!.replace('local://', '');
      await t.cloud.operate('terminate', id);
      return `terminated ${victim.metadata!.name}'s instance ${id}`;
    }
    case 'reboot-mid-drain': {
      // Bounded: each node is drained on its way to its new config, so one turns up once the pools
      // roll (after the operators' part of the upgrade, minutes in on a loaded machine).
      const deadline = Date.now() + 300_000;
      while (!over() && Date.now() < deadline) {
        // Only a node whose instance runs can be rebooted: one the worker-terminated fault has just
        // ended may still be listed, and drained, until its Machine is replaced.
        // (The cloud's API may be the one down for a moment: asked again.)
        const instances = await t.cloud.listInstances({ states: ['running'] }).catch(() => undefined);
        if (!instances) {
          await sleep(500);
          continue;
        }
        const running = new Set(instances.map((i) => i.id));
        const draining = (await t.kube.list(resources.nodes)).items.filter((n) => {
          const a = n.metadata?.annotations ?? {};
          const desired = a['machineconfiguration.openshift.io/desiredDrain'];
          return desired?.startsWith('drain-') && desired !== a['machineconfiguration.openshift.io/lastAppliedDrain']
            && running.has(n.spec?.providerID?.replace('local://', '') ?? '');
        });
        if (draining.length > 0) {
          const node = pick(draining);
          const id = node.spec!.providerID!.replace('local://', '');
          await t.cloud.operate('reboot', id);
          return `rebooted ${node.metadata!.name} while it was drained (${node.metadata!.annotations!['machineconfiguration.openshift.io/desiredDrain']})`;
        }
        await sleep(100);
      }
      return 'not injected: no node was being drained';
    }
    case 'cloud-restarted':
      return t.restartCloud ? t.restartCloud() : 'not injected: the cloud cannot be restarted from here';
  }
}
