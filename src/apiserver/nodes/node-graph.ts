// What each node may read because of the pods bound to it, as the Node authorizer's graph keeps
// it (plugin/pkg/auth/authorizer/node/graph.go): node ← pod ← secret / configmap / service
// account / persistent volume claim. Kept per pod, so that a pod moving, changing or going
// away updates exactly its own edges; fed from a watch on pods.
import type * as api from '../../api/index.js';

/** The kinds of objects a pod makes readable to its node. */
export type RelatedResource = 'pods' | 'secrets' | 'configmaps' | 'serviceaccounts' | 'persistentvolumeclaims';

const key = (resource: RelatedResource, namespace: string, name: string) => `${resource}/${namespace}/${name}`;

const names = (values: unknown[]): string[] => values.filter((v): v is string => typeof v === 'string' && v !== '');
/** The entries of a list that are objects (a stored pod may hold anything its writer sent). */
const list = <T>(v: T[] | undefined): T[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'object' && x !== null) : []);

/** The secrets, config maps, service account and claims one pod refers to (kube's VisitPod*Names). */
export function podReferences(pod: Partial<api.Pod>): { resource: RelatedResource; name: string }[] {
  const spec: Partial<api.PodSpec> = pod.spec ?? {};
  const containers: Array<Pick<api.Container, 'env' | 'envFrom'>> = [...list(spec.containers), ...list(spec.initContainers), ...list(spec.ephemeralContainers)];
  const volumes = list(spec.volumes);
  const projected = volumes.flatMap((v) => list(v.projected?.sources));
  const secrets = names([
    ...list(spec.imagePullSecrets).map((s) => s.name),
    ...volumes.map((v) => v.secret?.secretName),
    ...projected.map((s) => s.secret?.name),
    ...volumes.flatMap((v) => [v.azureFile?.secretName, v.cephfs?.secretRef?.name, v.cinder?.secretRef?.name, v.flexVolume?.secretRef?.name,
      v.iscsi?.secretRef?.name, v.rbd?.secretRef?.name, v.scaleIO?.secretRef?.name, v.storageos?.secretRef?.name, v.csi?.nodePublishSecretRef?.name]),
    ...containers.flatMap((c) => [...list(c.env).map((e) => e.valueFrom?.secretKeyRef?.name), ...list(c.envFrom).map((e) => e.secretRef?.name)]),
  ]);
  const configMaps = names([
    ...volumes.map((v) => v.configMap?.name),
    ...projected.map((s) => s.configMap?.name),
    ...containers.flatMap((c) => [...list(c.env).map((e) => e.valueFrom?.configMapKeyRef?.name), ...list(c.envFrom).map((e) => e.configMapRef?.name)]),
  ]);
  const claims = names([
    ...volumes.map((v) => v.persistentVolumeClaim?.claimName),
    // A generic ephemeral volume's claim is named after the pod and the volume.
    ...volumes.map((v) => (v.ephemeral && typeof v.name === 'string' ? `${pod.metadata?.name}-${v.name}` : undefined)),
  ]);
  return [
    ...[...new Set(secrets)].map((name) => ({ resource: 'secrets' as const, name })),
    ...[...new Set(configMaps)].map((name) => ({ resource: 'configmaps' as const, name })),
    ...[...new Set(claims)].map((name) => ({ resource: 'persistentvolumeclaims' as const, name })),
    ...names([spec.serviceAccountName ?? spec.serviceAccount]).map((name) => ({ resource: 'serviceaccounts' as const, name })),
  ];
}

/** Answers "is this object related to that node?" for the Node authorizer. */
export interface NodeRelations {
  related(node: string, resource: RelatedResource, namespace: string, name: string): boolean;
}

export class NodeGraph implements NodeRelations {
  /** Per node: related object key → how many pods on it refer to the object. */
  private readonly byNode = new Map<string, Map<string, number>>();
  /** Per pod (namespace/name): its node and the keys it contributed. */
  private readonly byPod = new Map<string, { node: string; keys: string[] }>();

  /** Records a pod's current state (bound or not). */
  upsertPod(pod: Partial<api.Pod>): void {
    const namespace = String(pod.metadata?.namespace ?? '');
    const name = String(pod.metadata?.name ?? '');
    this.removePod(namespace, name);
    const node = pod.spec?.nodeName;
    if (typeof node !== 'string' || node === '') return;
    const keys = [key('pods', namespace, name), ...podReferences(pod).map((r) => key(r.resource, namespace, r.name))];
    let counts = this.byNode.get(node);
    if (!counts) this.byNode.set(node, (counts = new Map()));
    for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
    this.byPod.set(`${namespace}/${name}`, { node, keys });
  }

  removePod(namespace: string, name: string): void {
    const entry = this.byPod.get(`${namespace}/${name}`);
    if (!entry) return;
    this.byPod.delete(`${namespace}/${name}`);
    const counts = this.byNode.get(entry.node)!;
    for (const k of entry.keys) {
      const n = (counts.get(k) ?? 1) - 1;
      if (n <= 0) counts.delete(k);
      else counts.set(k, n);
    }
    if (counts.size === 0) this.byNode.delete(entry.node);
  }

  related(node: string, resource: RelatedResource, namespace: string, name: string): boolean {
    return this.byNode.get(node)?.has(key(resource, namespace, name)) ?? false;
  }
}
