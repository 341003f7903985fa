// Small builders for the scheduler's table tests: nodes and pods with only what a case needs.
import type { ClusterSnapshot, Container, Node, Pod, Taint } from '../../src/cluster/scheduler/types.js';

export interface NodeSpec {
  cpu?: string;
  memory?: string;
  pods?: string | null;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  zone?: string;
  extra?: Record<string, string>;
}

export function node(name: string, spec: NodeSpec = {}): Node {
  const allocatable: Record<string, string> = { cpu: spec.cpu ?? '4', memory: spec.memory ?? '8Gi', ...spec.extra };
  if (spec.pods !== null) allocatable.pods = spec.pods ?? '110';
  const labels = { 'kubernetes.io/hostname': name, ...(spec.zone ? { 'topology.kubernetes.io/zone': spec.zone } : {}), ...spec.labels };
  return {
    apiVersion: 'v1', kind: 'Node', metadata: { name, labels },
    spec: { unschedulable: spec.unschedulable, taints: spec.taints },
    status: { allocatable, capacity: allocatable },
  };
}

export function pod(name: string, spec: Partial<Pod['spec']> & { labels?: Record<string, string>; namespace?: string; requests?: Record<string, string> } = {}): Pod {
  const { labels, namespace, requests, ...rest } = spec;
  const containers: Container[] = rest.containers ?? [{ name: 'main', image: 'registry.example/app:1', resources: requests ? { requests } : {} }];
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: namespace ?? 'default', labels }, spec: { ...rest, containers } };
}

/** A snapshot with `bound` pods placed on the named nodes. */
export function snapshot(nodes: Node[], bound: Record<string, Pod[]> = {}, namespaceLabels?: Record<string, Record<string, string>>): ClusterSnapshot {
  return {
    nodes,
    podsByNode: new Map(Object.entries(bound).map(([n, pods]) => [n, pods.map((p) => ({ ...p, spec: { ...p.spec, nodeName: n } }))])),
    namespaceLabels: namespaceLabels ? new Map(Object.entries(namespaceLabels)) : undefined,
  };
}

/** Existing pods from "node:label,label[:ns1|:terminating]" shorthands, e.g. "node-a:foo,bar". */
export function existing(specs: string[]): Pod[] {
  return specs.map((s, i) => {
    const [nodeName, labels, flag] = s.split(':');
    return {
      metadata: {
        name: `e${i}`, namespace: flag === 'ns1' ? 'ns1' : 'default',
        labels: Object.fromEntries(labels.split(',').filter(Boolean).map((l) => [l, ''])),
        ...(flag === 'terminating' ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      },
      spec: { nodeName, containers: [{ name: 'c' }] },
    };
  });
}
