// The parts of core/v1 Pods, Nodes and Namespaces the scheduler reads, typed, and the snapshot of
// the cluster the pure core schedules against.
import type { MetaLabelSelector } from '../../common/label-selectors.js';
import type { OwnerReference } from '../../common/kube-types.js';
import type * as api from '../../api/index.js';

export type ResourceList = Record<string, string | number>;

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[] | null;
  matchFields?: NodeSelectorRequirement[] | null;
}

export interface PodAffinityTerm {
  labelSelector?: MetaLabelSelector | null;
  namespaces?: string[] | null;
  namespaceSelector?: MetaLabelSelector | null;
  topologyKey: string;
}

export interface PodAffinityRules {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] | null;
  preferredDuringSchedulingIgnoredDuringExecution?: Array<{ weight: number; podAffinityTerm: PodAffinityTerm }> | null;
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway' | string;
  labelSelector?: MetaLabelSelector | null;
  minDomains?: number | null;
  nodeAffinityPolicy?: 'Honor' | 'Ignore' | string | null;
  nodeTaintsPolicy?: 'Honor' | 'Ignore' | string | null;
  matchLabelKeys?: string[] | null;
}

export interface ContainerPort {
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
}

export interface Container {
  name: string;
  image?: string;
  resources?: { requests?: ResourceList | null; limits?: ResourceList | null } | null;
  ports?: ContainerPort[] | null;
  restartPolicy?: string;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  creationTimestamp?: string;
  resourceVersion?: string;
  ownerReferences?: OwnerReference[];
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    nodeName?: string;
    schedulerName?: string;
    nodeSelector?: Record<string, string> | null;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] } | null;
        preferredDuringSchedulingIgnoredDuringExecution?: Array<{ weight: number; preference: NodeSelectorTerm }> | null;
      } | null;
      podAffinity?: PodAffinityRules | null;
      podAntiAffinity?: PodAffinityRules | null;
    } | null;
    tolerations?: Toleration[] | null;
    containers: Container[];
    initContainers?: Container[] | null;
    overhead?: ResourceList | null;
    topologySpreadConstraints?: TopologySpreadConstraint[] | null;
    schedulingGates?: Array<{ name: string }> | null;
    priority?: number;
    /** PreemptLowerPriority (the default) or Never. */
    preemptionPolicy?: string;
    volumes?: Array<{ name: string; persistentVolumeClaim?: { claimName: string } | null }> | null;
  };
  status?: { phase?: string; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>; nominatedNodeName?: string; startTime?: string };
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { unschedulable?: boolean; taints?: Taint[] | null } | null;
  status?: { allocatable?: ResourceList | null; capacity?: ResourceList | null } | null;
}

/** The claims, volumes and classes of the cluster, as the scheduler's informers hold them (VolumeBinding reads them). */
export interface StorageSnapshot {
  claim(namespace: string, name: string): api.PersistentVolumeClaim | undefined;
  volume(name: string): api.PersistentVolume | undefined;
  volumes(): api.PersistentVolume[];
  storageClass(name: string): api.StorageClass | undefined;
}

/** What the pure core schedules against: the nodes and the pods bound (or assumed) to each. */
export interface ClusterSnapshot {
  nodes: Node[];
  /** Non-terminal pods by node name, including the scheduler's assumed pods. */
  podsByNode: ReadonlyMap<string, readonly Pod[]>;
  /** Namespace labels, for pod-affinity terms with a namespaceSelector. */
  namespaceLabels?: ReadonlyMap<string, Record<string, string>>;
  /** Claims, volumes and classes, for pods with PersistentVolumeClaims. */
  storage?: StorageSnapshot;
}

/** The scheduler pods get when they name none (spec.schedulerName). */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
