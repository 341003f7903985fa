// The horizontal pod autoscaler against the embedded API server: a Deployment (with the
// Deployment and ReplicaSet controllers and the kubelet stand-in) scaled through its scale
// subresource on its pods' CPU usage as the real metrics.k8s.io server answers it, behind the
// aggregator (its figures from a stand-in for the kubelets it scrapes). `kubectl autoscale` makes
// the autoscaler; it scales up within the rate limit, reports its targets and conditions as kubectl
// shows them, holds a scale-down for its stabilization window, respects maxReplicas, and says why
// when the metrics cannot be had. The replica arithmetic, the stabilization and the rate limits as
// tables, and the autoscaling/v1 ⇄ v2 conversion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, loadKubeConfig, readRequestHeaderAuth, resources } from '../../src/kube/index.js';
import { startClusterServer } from '../../src/apiserver/cluster-server.js';
import { runKubectl } from '../helpers/apiserver.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { logger } from '../../src/common/log.js';
import { MetricsApiServer } from '../../src/metrics-server/server.js';
import type { PodUsage } from '../../src/metrics-server/scraper.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { DEPLOYMENTS, HORIZONTAL_POD_AUTOSCALERS, PODS } from '../../src/cluster/workloads/resources.js';
import { DEFAULT_TUNING, limitRate, resourceReplicas, stabilize, type PodSample } from '../../src/cluster/workloads/hpa.js';
import { fromV1, targetsCell, toV1 } from '../../src/apiserver/kinds/horizontalpodautoscalers.js';
import { eventually } from '../helpers/eventually.js';
import { createNode, startStandIns } from './workloads/stand-ins.js';

test('kubectl autoscale: the autoscaler follows the pods\' CPU usage from metrics.k8s.io, within its rate, bounds and stabilization window', async () => {
  // A cluster's API server: the metrics server authorises its callers with SubjectAccessReviews.
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-hpa-'));
  const cluster = await startClusterServer({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  const kubeconfigPath = cluster.server.kubeconfigPath;
  const client = new KubeClient(loadKubeConfig(kubeconfigPath));
  const server = {
    kubectlOk: async (args: string[], input?: string) => {
      const r = await runKubectl(kubeconfigPath, args, { input });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    },
  };
  const stop = new AbortController();
  const standIns = startStandIns(client, { readyAfterMs: 20 });
  // The metrics server, real, over a stand-in for the kubelets it scrapes: every pod of app=web uses `millicores`.
  let millicores = 100;
  const podsNow = new Map<string, api.Pod>();
  const scraper = {
    nodes: () => [],
    pods: () => [...podsNow.values()].filter((p) => p.status?.phase === 'Running').map((pod) => ({ pod, usage: { containers: [{ name: 'c', usage: { cpuCores: millicores / 1000, memoryBytes: 1 << 20, timestampMs: Date.now(), windowMs: 1000 } }], timestampMs: Date.now(), windowMs: 1000 } as PodUsage })),
  };
  const watching = (async () => {
    for (;;) {
      if (stop.signal.aborted) return;
      const list = await client.list(PODS, 'default', { labelSelector: 'app=web' }).catch(() => ({ items: [] as api.Pod[] }));
      podsNow.clear();
      for (const p of list.items) if (!p.metadata.deletionTimestamp) podsNow.set(p.metadata.name, p);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const ca = await createCA('metrics-ca');
  const tls = await issueServingCert(ca, 'metrics-server', ['metrics-server.kube-system.svc']);
  const metrics = new MetricsApiServer(client, scraper, { host: '127.0.0.1', port: 0, tls, requestHeader: await readRequestHeaderAuth(client), log: logger('metrics-server') });
  await metrics.start();
  try {
    await server.kubectlOk(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'List', items: [
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics-server', namespace: 'kube-system' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 10250 }] } },
        { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'metrics-server', namespace: 'kube-system' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: metrics.port }] }] },
        { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1beta1.metrics.k8s.io' }, spec: { group: 'metrics.k8s.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, service: { namespace: 'kube-system', name: 'metrics-server' }, caBundle: Buffer.from(ca.certPem).toString('base64') } },
      ],
    }));
    await createNode(client, 'worker-a');
    const running = runWorkloadControllers({ kubeconfig: loadKubeConfig(kubeconfigPath), signal: stop.signal, controllers: ['deployment', 'replicaset', 'horizontalpodautoscaling'], leaderElection: false, hpa: { syncPeriodMs: 300 } });
    await client.create(DEPLOYMENTS, {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'echo', resources: { requests: { cpu: '200m' } } }] } } },
    } as api.Deployment);
    const replicas = async () => (await client.get(DEPLOYMENTS, 'web', 'default')).spec!.replicas;
    await eventually('2 pods running', () => [...podsNow.values()].filter((p) => p.status?.phase === 'Running').length === 2);

    // 100m of 200m: 50%, the target; nothing to do.
    await server.kubectlOk(['autoscale', 'deployment', 'web', '--min=2', '--max=5', '--cpu-percent=50']);
    // No waiting to scale down later in this test (users may shorten the window too).
    await client.mergePatch(HORIZONTAL_POD_AUTOSCALERS, 'web', 'default', { spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 2 } } } });
    await eventually('50% measured', async () => (await server.kubectlOk(['get', 'hpa', 'web'])).includes('cpu: 50%/50%'));
    const table = await server.kubectlOk(['get', 'hpa', 'web']);
    assert.match(table, /NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\nweb\s+Deployment\/web\s+cpu: 50%\/50%\s+2\s+5\s+2\s+/);
    assert.equal(await replicas(), 2);

    // 175m: 87.5% → ceil(2 × 1.75) = 4.
    millicores = 175;
    await eventually('4 replicas', async () => (await replicas()) === 4);
    let hpa = await client.get(HORIZONTAL_POD_AUTOSCALERS, 'web', 'default');
    const condition = (type: string) => hpa.status!.conditions!.find((c) => c.type === type);
    assert.equal(condition('ScalingActive')!.reason, 'ValidMetricFound');
    assert.equal(condition('ScalingActive')!.message, 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)');
    const events = await client.list(resources.events, 'default', { fieldSelector: 'reason=SuccessfulRescale' });
    assert.deepEqual(events.items.map((e) => e.message), ['New size: 4; reason: cpu resource utilization (percentage of request) above target']);

    // Far above: the count stops at maxReplicas, and says so.
    millicores = 1000;
    await eventually('5 replicas, limited', async () => {
      hpa = await client.get(HORIZONTAL_POD_AUTOSCALERS, 'web', 'default');
      // (the sync that scales records the count it found; the next one sees 5)
      return (await replicas()) === 5 && hpa.status?.currentReplicas === 5 && condition('ScalingLimited')?.reason === 'TooManyReplicas';
    });
    // The same object read through autoscaling/v1, as kubectl autoscale before 1.33 wrote it.
    const v1 = await client.request<{ spec: Record<string, number>; status: Record<string, number>; metadata: api.ObjectMeta }>('GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web');
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 50);
    assert.equal(v1.status.currentReplicas, 5);
    assert.ok(v1.status.currentCPUUtilizationPercentage >= 400, 'the CPU utilization in v1\'s own field');
    assert.equal(JSON.parse(v1.metadata.annotations!['autoscaling.alpha.kubernetes.io/behavior']).scaleDown.stabilizationWindowSeconds, 2);

    // Idle: down to minReplicas once the window has passed.
    millicores = 10;
    await eventually('back to 2', async () => (await replicas()) === 2, 15_000);

    // A new autoscaler waits out its scale-down window (300 s by default) from the replicas there are.
    await server.kubectlOk(['delete', 'hpa', 'web']);
    await server.kubectlOk(['autoscale', 'deployment', 'web', '--min=1', '--max=5', '--cpu-percent=50']);
    await eventually('measured again', async () => (await client.get(HORIZONTAL_POD_AUTOSCALERS, 'web', 'default')).status?.currentMetrics?.[0]?.resource?.current?.averageUtilization === 5);
    await new Promise((r) => setTimeout(r, 1500));
    hpa = await client.get(HORIZONTAL_POD_AUTOSCALERS, 'web', 'default');
    assert.deepEqual([await replicas(), hpa.status!.desiredReplicas], [2, 2], '5% of the requests asks for 1, but not within the window');

    // No metrics: the autoscaler says why, and leaves the count alone.
    await client.delete(resources.apiServices, 'v1beta1.metrics.k8s.io');
    await eventually('ScalingActive False', async () => {
      hpa = await client.get(HORIZONTAL_POD_AUTOSCALERS, 'web', 'default');
      return condition('ScalingActive')?.status === 'False' && condition('ScalingActive')!.reason === 'FailedGetResourceMetric';
    });
    assert.match(condition('ScalingActive')!.message!, /^the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: /);
    assert.equal(await replicas(), 2);
    stop.abort();
    await running;
    await watching;
  } finally {
    stop.abort();
    await metrics.stop();
    await standIns.stop();
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the replicas a CPU metric asks for, as kube computes them', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  const pod = (name: string, o: { ready?: boolean; phase?: string; request?: string; started?: number } = {}): api.Pod => ({
    metadata: { name, namespace: 'd' },
    spec: { containers: [{ name: 'c', image: 'x', resources: o.request === undefined ? { requests: { cpu: '100m' } } : o.request ? { requests: { cpu: o.request } } : {} }] },
    status: {
      phase: o.phase ?? 'Running',
      startTime: new Date(o.started ?? now - 600_000).toISOString(),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: new Date((o.started ?? now - 600_000) + 5_000).toISOString() }],
    },
  });
  const sample = (milli: number): PodSample => ({ containers: { c: BigInt(milli) }, timestampMs: now - 1000, windowMs: 30_000 });
  const samples = (entries: Record<string, number>) => new Map(Object.entries(entries).map(([k, v]) => [k, sample(v)]));
  const cpu = (current: number, pods: api.Pod[], s: Map<string, PodSample>, target = 50) => resourceReplicas(current, { utilization: target }, pods, s, 'cpu', now);

  // 90m of 100m at a 50% target: twice as many.
  assert.deepEqual(cpu(2, [pod('a'), pod('b')], samples({ a: 90, b: 90 })), { replicas: 4, utilization: 90, averageMilli: 90n });
  // Within 10% of the target: no change (within --horizontal-pod-autoscaler-tolerance).
  assert.equal(cpu(2, [pod('a'), pod('b')], samples({ a: 54, b: 54 })).replicas, 2);
  assert.equal(resourceReplicas(2, { utilization: 50 }, [pod('a'), pod('b')], samples({ a: 54, b: 54 }), 'cpu', now, undefined, { ...DEFAULT_TUNING, tolerance: 0.01 }).replicas, 3);
  // A pod without a sample counts as 100% on the way down (so the count falls less) …
  assert.equal(cpu(3, [pod('a'), pod('b'), pod('c')], samples({ a: 10, b: 10 })).replicas, 3);
  assert.equal(cpu(4, [pod('a'), pod('b'), pod('c'), pod('d')], samples({ a: 10, b: 10, c: 10 })).replicas, 3, '(10+10+10+100)/400 = 32.5%: 3, not the 1 the samples alone ask for');
  // … and as 0% on the way up.
  assert.equal(cpu(3, [pod('a'), pod('b'), pod('c')], samples({ a: 100, b: 100 })).replicas, 4, '(100+100+0)/300 = 67%: 4, not the 6 the samples alone ask for');
  // A pod not ready (its CPU while starting) is left out; on the way up it counts as 0%.
  assert.equal(cpu(2, [pod('a'), pod('b', { ready: false })], samples({ a: 100, b: 500 })).replicas, 2);
  // A pending pod is left out; a container without a CPU request is an error naming it.
  assert.equal(cpu(2, [pod('a'), pod('p', { phase: 'Pending' })], samples({ a: 100 })).replicas, 2);
  assert.throws(() => cpu(1, [pod('a', { request: '' })], samples({ a: 100 })), /missing request for cpu in container c of Pod a/);
  assert.throws(() => cpu(1, [], samples({})), /no pods returned by selector/);
  assert.throws(() => cpu(1, [pod('a')], samples({})), /did not receive metrics for targeted pods/);
  // An average value target: 300m per pod against 100m.
  assert.equal(resourceReplicas(2, { averageMilli: 100n }, [pod('a'), pod('b')], samples({ a: 300, b: 300 }), 'cpu', now).replicas, 6);
});

test('stabilization and rate limits, as kube applies them', () => {
  const now = 1_000_000;
  const hpa = (spec: Partial<NonNullable<api.HorizontalPodAutoscaler['spec']>> = {}): api.HorizontalPodAutoscaler => ({ metadata: { name: 'h' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'w' }, minReplicas: 1, maxReplicas: 100, ...spec } });
  // Down: the highest recommendation of the last 300 s wins.
  const history = [{ atMs: now - 200_000, replicas: 8 }, { atMs: now - 400_000, replicas: 10 }];
  assert.equal(stabilize(hpa(), 10, 3, history, now), 8);
  assert.deepEqual(history.map((r) => r.replicas), [8, 3], 'what fell out of both windows is forgotten; the new one is kept');
  // Up: at once (no window).
  assert.equal(stabilize(hpa(), 2, 9, [], now), 9);
  // Without a scaleDown rule, the controller manager's --horizontal-pod-autoscaler-downscale-stabilization.
  assert.equal(stabilize(hpa(), 10, 3, [{ atMs: now - 60_000, replicas: 8 }], now, { ...DEFAULT_TUNING, downscaleStabilizationMs: 30_000 }), 3);
  assert.equal(stabilize(hpa({ behavior: { scaleDown: { stabilizationWindowSeconds: 120 } } }), 10, 3, [{ atMs: now - 60_000, replicas: 8 }], now, { ...DEFAULT_TUNING, downscaleStabilizationMs: 30_000 }), 8, 'the autoscaler\'s own window wins');
  // Up by the larger of 4 pods or 100% per 15 s: from 2, 6; from 10, 20.
  assert.deepEqual(limitRate(hpa(), 2, 50, [], now), { replicas: 6, limited: { status: 'True', reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' } });
  assert.equal(limitRate(hpa(), 10, 50, [], now).replicas, 20);
  // What was added in the period counts: 4 added 5 s ago from 2 → start 2 → 6 at most.
  assert.equal(limitRate(hpa(), 6, 50, [{ atMs: now - 5000, change: 4 }], now).replicas, 6);
  // Bounds.
  assert.equal(limitRate(hpa({ maxReplicas: 5 }), 4, 9, [], now).limited.reason, 'TooManyReplicas');
  assert.deepEqual(limitRate(hpa({ minReplicas: 3 }), 4, 1, [], now), { replicas: 3, limited: { status: 'True', reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' } });
  assert.equal(limitRate(hpa(), 4, 5, [], now).limited.reason, 'DesiredWithinRange');
  // A policy of 1 pod per minute down; Disabled stops the direction.
  const slow = hpa({ behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } } });
  assert.equal(limitRate(slow, 10, 2, [], now).replicas, 9);
  assert.equal(limitRate(hpa({ behavior: { scaleUp: { selectPolicy: 'Disabled' } } }), 3, 9, [], now).replicas, 3);
});

test('autoscaling/v1 and v2 are one object: the CPU target in v1\'s field, the rest in annotations, and back', () => {
  const v2: api.HorizontalPodAutoscaler = {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'd', annotations: { keep: 'me' } },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'w' }, minReplicas: 2, maxReplicas: 9,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 30 } },
    },
    status: { currentReplicas: 3, desiredReplicas: 4, currentMetrics: [{ type: 'Resource', resource: { name: 'memory', current: { averageValue: '90Mi' } } }, { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 75, averageValue: '75m' } } }] },
  };
  const v1 = toV1(v2) as { spec: Record<string, unknown>; status: Record<string, unknown>; metadata: api.ObjectMeta };
  assert.deepEqual(v1.spec, { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'w' }, minReplicas: 2, maxReplicas: 9, targetCPUUtilizationPercentage: 60 });
  assert.deepEqual(v1.status, { currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 75 });
  assert.deepEqual(Object.keys(v1.metadata.annotations!).sort(), ['autoscaling.alpha.kubernetes.io/behavior', 'autoscaling.alpha.kubernetes.io/current-metrics', 'autoscaling.alpha.kubernetes.io/metrics', 'keep']);
  // kube's v1 shapes in the annotations; every current metric there, the CPU one too (its raw value).
  assert.deepEqual(JSON.parse(v1.metadata.annotations!['autoscaling.alpha.kubernetes.io/metrics']), [{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } }]);
  assert.deepEqual(JSON.parse(v1.metadata.annotations!['autoscaling.alpha.kubernetes.io/current-metrics']), [
    { type: 'Resource', resource: { name: 'memory', currentAverageValue: '90Mi' } },
    { type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 75, currentAverageValue: '75m' } },
  ]);
  const back = fromV1(v1 as unknown as api.Unstructured);
  assert.deepEqual(back.status!.currentMetrics, v2.status!.currentMetrics, 'the current metrics come back whole');
  // An object exported from a real cluster at v1, with kube's annotations, reads as kube reads it.
  const exported = fromV1({
    apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'x', annotations: { 'autoscaling.alpha.kubernetes.io/metrics': JSON.stringify([{ type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } }, { type: 'External', external: { metricName: 'queue', targetValue: '30' } }]) } },
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'w' }, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
  } as api.Unstructured);
  assert.deepEqual(exported.spec!.metrics, [
    { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
    { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } } },
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
  ]);
  assert.deepEqual(back.metadata.annotations, { keep: 'me' });
  assert.deepEqual(back.spec!.behavior, v2.spec!.behavior);
  assert.deepEqual(new Set(back.spec!.metrics!.map((m) => m.resource!.name)), new Set(['cpu', 'memory']));
  // kubectl's TARGETS column.
  assert.equal(targetsCell(v2), 'memory: 90Mi/100Mi, cpu: 75%/60%');
  assert.equal(targetsCell({ ...v2, status: undefined }), 'memory: <unknown>/100Mi, cpu: <unknown>/60%');
});
