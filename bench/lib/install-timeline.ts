// Where an install's time went, for bench:install: the bring-up's own output as it arrived (each
// step, and each wait with when it began and ended), then what the cluster's objects say about
// when things happened — each Node's registration and Ready, each operator pod's creation,
// scheduling, start and readiness, each ClusterOperator's Available, the worker Machines, and the
// ClusterVersion's Available. Times are seconds since `bosun start` was started; the output's to
// a tenth (stamped by the bench as each line arrived), the objects' to the second (metav1.Time).
import type * as api from '../../src/api/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';
import type { OutputLine } from './bosun-start.js';

type Conditioned = { status?: { conditions?: ReadonlyArray<{ type: string; status?: string; lastTransitionTime?: string }> } };

/** The namespaces whose pods are the payload's components (every `openshift-*` one). */
const isPayloadNamespace = (ns: string | undefined) => Boolean(ns?.startsWith('openshift-'));

export async function printInstallTimeline(o: { kubeconfigPath: string; startedAt: number; lines: OutputLine[] }): Promise<void> {
  const since = (time: string | undefined) => (time ? (Date.parse(time) - o.startedAt) / 1000 : undefined);
  const s = (t: number | undefined, width = 6) => (t === undefined ? '—' : t.toFixed(0)).padStart(width);
  const became = (object: Conditioned, type: string) => {
    const c = object.status?.conditions?.find((x) => x.type === type);
    return c?.status === 'True' ? since(c.lastTransitionTime) : undefined;
  };

  console.log(`\nwhere the install's time went (seconds since \`bosun start\` began)`);
  console.log(`\nthe bring-up's steps and waits, from its output as it arrived`);
  for (const line of outputPhases(o.lines)) console.log(line);

  const client = new KubeClient(loadKubeConfig(o.kubeconfigPath));
  const [nodes, pods, operators, machines, cv] = await Promise.all([
    client.list(resources.nodes),
    client.list(resources.pods),
    client.list(resources.clusterOperators),
    client.list(resources.machines),
    client.get(resources.clusterVersions, 'version'),
  ]);

  console.log(`\nnodes (from the API; to the second)        registered  Ready`);
  const byReady = (a: number | undefined, b: number | undefined) => (a ?? Infinity) - (b ?? Infinity);
  for (const n of [...nodes.items].sort((a, b) => byReady(became(a, 'Ready'), became(b, 'Ready')))) {
    console.log(`  ${n.metadata.name!.padEnd(40)} ${s(since(n.metadata.creationTimestamp), 10)} ${s(became(n, 'Ready'))}`);
  }
  const workers = machines.items.filter((m) => !m.metadata.labels?.['cluster.x-k8s.io/control-plane']);
  if (workers.length) {
    console.log(`\nworker Machines                             created  node Ready`);
    const nodeReady = new Map(nodes.items.map((n) => [n.metadata.name, became(n, 'Ready')]));
    for (const m of workers) console.log(`  ${m.metadata.name!.padEnd(40)} ${s(since(m.metadata.creationTimestamp), 9)} ${s(nodeReady.get(m.status?.nodeRef?.name ?? ''), 10)}`);
  }

  console.log(`\noperator pods, by readiness                                created scheduled started  ready  node`);
  const payloadPods = pods.items.filter((p) => isPayloadNamespace(p.metadata.namespace));
  const podTimes = (p: api.Pod) => {
    const started = (p.status?.containerStatuses ?? []).map((c) => since(c.state?.running?.startedAt)).filter((t): t is number => t !== undefined);
    return { created: since(p.metadata.creationTimestamp), scheduled: became(p, 'PodScheduled'), started: started.length ? Math.max(...started) : undefined, ready: became(p, 'Ready') };
  };
  for (const p of payloadPods.sort((a, b) => byReady(podTimes(a).ready, podTimes(b).ready))) {
    const t = podTimes(p);
    console.log(`  ${`${p.metadata.namespace!.replace(/^openshift-/, '')}/${p.metadata.name}`.slice(0, 56).padEnd(56)} ${s(t.created, 7)} ${s(t.scheduled, 9)} ${s(t.started, 7)} ${s(t.ready)}  ${p.spec?.nodeName ?? ''}`);
  }

  console.log(`\nClusterOperators, in the order they became Available`);
  for (const co of [...operators.items].sort((a, b) => byReady(became(a, 'Available'), became(b, 'Available')))) {
    console.log(`  ${co.metadata.name!.padEnd(48)} ${s(became(co, 'Available'))}`);
  }
  console.log(`  ${'ClusterVersion version'.padEnd(48)} ${s(became(cv, 'Available'))}`);
}

/** Each step line with its time, and each wait as one line with when it began, ended and took. */
function outputPhases(lines: OutputLine[]): string[] {
  const out: string[] = [];
  const open = new Map<string, number>();
  for (const { at, text } of lines) {
    const step = /^\[\d+\/\d+\] (.*?) \(\d+\.\ds\)$/.exec(text);
    if (step) {
      out.push(`  ${at.toFixed(1).padStart(6)}        ${step[1].slice(0, 110)}`);
      continue;
    }
    const begins = /^\s+waiting for (.*)$/.exec(text);
    if (begins) {
      open.set(begins[1], at);
      continue;
    }
    for (const [what, from] of open) {
      if (text.trim().startsWith(`${what}: `) && /\(after \d+s\)$/.test(text)) {
        out.push(`  ${from.toFixed(1).padStart(6)}–${at.toFixed(1).padEnd(6)} ${`(${(at - from).toFixed(1)} s)`.padStart(8)} waiting for ${what}`.slice(0, 130));
        open.delete(what);
        break;
      }
    }
    if (/hand-over:|left api-int/.test(text)) out.push(`  ${at.toFixed(1).padStart(6)}        ${text.trim()}`);
  }
  return out;
}
