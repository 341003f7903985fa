// Seeded random clusters through the pure core, pod after pod as the shell places them (the
// NodeInfos carried from cycle to cycle as the scheduler carries them): whatever the mix, no node
// ends up over its cpu, memory or pod count, no host port is taken twice on a node, no pod lands
// on a taint it does not tolerate, DoNotSchedule spreading holds its skew, and every pod that
// fits nowhere is told why for every node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeInfoCache, podRequests } from '../../src/cluster/scheduler/resources.js';
import { schedulePod } from '../../src/cluster/scheduler/schedule.js';
import type { Node, Pod } from '../../src/cluster/scheduler/types.js';
import { node, pod } from './scheduler-fixtures.js';

/** mulberry32: a small seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (const seed of [1, 2, 3, 4, 5]) {
  test(`random cluster ${seed}: placements never overcommit, collide or break taints and spread`, () => {
    const r = random(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
    const nodes: Node[] = Array.from({ length: 8 }, (_, i) => node(`n${i}`, {
      zone: pick(['a', 'b', 'c']), cpu: pick(['1', '2', '4']), memory: pick(['2Gi', '4Gi']), pods: pick(['5', '10', '110']),
      taints: r() < 0.25 ? [{ key: 'dedicated', value: 'infra', effect: pick(['NoSchedule', 'NoExecute', 'PreferNoSchedule']) }] : undefined,
      unschedulable: r() < 0.1,
    }));
    const bound = new Map<string, Pod[]>();
    const infos = new NodeInfoCache();
    const spread = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } }];
    for (let i = 0; i < 150; i++) {
      const app = pick(['web', 'db', 'spread']);
      const p = pod(`p${i}`, {
        labels: { app },
        containers: [{ name: 'c', resources: { requests: { cpu: pick(['100m', '250m', '500m']), memory: pick(['64Mi', '256Mi', '512Mi']) } }, ports: r() < 0.2 ? [{ containerPort: 80, hostPort: pick([8080, 8081]) }] : undefined }],
        tolerations: r() < 0.3 ? [{ key: 'dedicated', operator: 'Exists' }] : undefined,
        topologySpreadConstraints: app === 'spread' ? spread : undefined,
      });
      const result = schedulePod(p, { nodes, podsByNode: bound }, {}, infos.get(nodes, bound));
      if ('error' in result) {
        assert.equal(result.error.nodeReasons.size, nodes.length, `${p.metadata.name}: every node gives a reason: ${result.error.message}`);
        assert.match(result.error.message, /^0\/8 nodes are available: .+\.$/);
        continue;
      }
      bound.set(result.node, [...(bound.get(result.node) ?? []), { ...p, spec: { ...p.spec, nodeName: result.node } }]);
    }
    const placed = [...bound.values()].flat();
    assert.ok(placed.length > 0, 'something was placed');
    for (const n of nodes) {
      const pods = bound.get(n.metadata.name) ?? [];
      const alloc = n.status!.allocatable!;
      const sum = (f: (p: Pod) => number) => pods.reduce((s, p) => s + f(p), 0);
      assert.ok(pods.length <= Number(alloc.pods), `${n.metadata.name}: pod count`);
      assert.ok(sum((p) => podRequests(p).milliCPU) <= Number(alloc.cpu) * 1000, `${n.metadata.name}: cpu`);
      assert.ok(sum((p) => podRequests(p).memory) <= Number(String(alloc.memory).replace('Gi', '')) * 2 ** 30, `${n.metadata.name}: memory`);
      const ports = pods.flatMap((p) => p.spec.containers.flatMap((c) => c.ports ?? []).map((port) => port.hostPort));
      assert.equal(new Set(ports).size, ports.length, `${n.metadata.name}: host ports`);
      if (n.spec?.unschedulable) assert.equal(pods.length, 0, `${n.metadata.name}: cordoned`);
      const hard = n.spec?.taints?.find((t) => t.effect !== 'PreferNoSchedule');
      if (hard) for (const p of pods) assert.ok(p.spec.tolerations?.length, `${p.metadata.name} on ${n.metadata.name}: untolerated taint`);
    }
    // Every zone with a node is a domain (nodeTaintsPolicy Ignore, kube's default), so the spread
    // pods' zone counts differ by at most maxSkew (1).
    const zoneOf = (name: string) => nodes.find((n) => n.metadata.name === name)!.metadata.labels!['topology.kubernetes.io/zone'];
    const perZone = new Map<string, number>();
    for (const n of nodes) perZone.set(n.metadata.labels!['topology.kubernetes.io/zone'], perZone.get(n.metadata.labels!['topology.kubernetes.io/zone']) ?? 0);
    for (const p of placed.filter((x) => x.metadata.labels?.app === 'spread')) perZone.set(zoneOf(p.spec.nodeName!), perZone.get(zoneOf(p.spec.nodeName!))! + 1);
    const counts = [...perZone.values()];
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `spread skew: ${JSON.stringify([...perZone])}`);
  });
}
