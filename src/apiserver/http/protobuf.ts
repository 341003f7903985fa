// Decoding of Kubernetes protobuf request bodies. client-go's typed clients (and so `kubectl
// create configmap|secret|namespace|serviceaccount`) send built-in objects as
// `application/vnd.kubernetes.protobuf` and do not fall back to JSON. The body is the `k8s\0`
// magic followed by a runtime.Unknown envelope whose `raw` field is the object's message; the
// field numbers below are those of the Kubernetes API's generated.proto files. Types without a
// table here are refused with 415, naming the kind. The workload and RBAC kinds are covered for
// what kubectl's `create <kind>` generators send (test/apiserver/kubectl.test.ts checks each
// against the same command's `--dry-run=client -o json`), and the Pod `kubectl debug node/<name>` creates.

import { BosunError } from '../../common/errors.js';
import { rfc3339 } from '../../common/time.js';
type FieldKind =
  | 'string'
  | 'bytes'
  | 'int'
  | 'bool'
  | 'intOrString'
  /** metav1.Time: seconds and nanos, written as RFC 3339 the way its JSON form is. */
  | 'time'
  /** resource.Quantity: a message of one string, written as that string. */
  | 'quantity'
  | { message: string }
  | { map: 'string' | 'bytes' | 'quantity' };

interface Field {
  name: string;
  kind: FieldKind;
  repeated?: boolean;
  /** A Go pointer field (`*int32`): present means set, so 0 and false are kept. */
  optional?: boolean;
  /** A message whose fields the JSON form has beside its parent's (Go's embedded struct, `json:",inline"`). */
  inline?: boolean;
}

const MESSAGES: Record<string, Record<number, Field>> = {
  TypeMeta: { 1: { name: 'apiVersion', kind: 'string' }, 2: { name: 'kind', kind: 'string' } },
  Unknown: { 1: { name: 'typeMeta', kind: { message: 'TypeMeta' } }, 2: { name: 'raw', kind: 'bytes' }, 3: { name: 'contentEncoding', kind: 'string' }, 4: { name: 'contentType', kind: 'string' } },
  ObjectMeta: {
    1: { name: 'name', kind: 'string' },
    2: { name: 'generateName', kind: 'string' },
    3: { name: 'namespace', kind: 'string' },
    5: { name: 'uid', kind: 'string' },
    6: { name: 'resourceVersion', kind: 'string' },
    7: { name: 'generation', kind: 'int' },
    10: { name: 'deletionGracePeriodSeconds', kind: 'int' },
    11: { name: 'labels', kind: { map: 'string' } },
    12: { name: 'annotations', kind: { map: 'string' } },
    13: { name: 'ownerReferences', kind: { message: 'OwnerReference' }, repeated: true },
    14: { name: 'finalizers', kind: 'string', repeated: true },
  },
  OwnerReference: {
    1: { name: 'kind', kind: 'string' },
    3: { name: 'name', kind: 'string' },
    4: { name: 'uid', kind: 'string' },
    5: { name: 'apiVersion', kind: 'string' },
    6: { name: 'controller', kind: 'bool' },
    7: { name: 'blockOwnerDeletion', kind: 'bool' },
  },
  ObjectReference: {
    1: { name: 'kind', kind: 'string' },
    2: { name: 'namespace', kind: 'string' },
    3: { name: 'name', kind: 'string' },
    4: { name: 'uid', kind: 'string' },
    5: { name: 'apiVersion', kind: 'string' },
    6: { name: 'resourceVersion', kind: 'string' },
    7: { name: 'fieldPath', kind: 'string' },
  },
  LocalObjectReference: { 1: { name: 'name', kind: 'string' } },
  ConfigMap: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'data', kind: { map: 'string' } },
    3: { name: 'binaryData', kind: { map: 'bytes' } },
    4: { name: 'immutable', kind: 'bool' },
  },
  Secret: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'data', kind: { map: 'bytes' } },
    3: { name: 'type', kind: 'string' },
    4: { name: 'stringData', kind: { map: 'string' } },
    5: { name: 'immutable', kind: 'bool' },
  },
  Namespace: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'NamespaceSpec' } },
    3: { name: 'status', kind: { message: 'NamespaceStatus' } },
  },
  NamespaceSpec: { 1: { name: 'finalizers', kind: 'string', repeated: true } },
  NamespaceStatus: { 1: { name: 'phase', kind: 'string' } },
  Deployment: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'DeploymentSpec' } },
  },
  DeploymentSpec: {
    1: { name: 'replicas', kind: 'int', optional: true },
    2: { name: 'selector', kind: { message: 'LabelSelector' } },
    3: { name: 'template', kind: { message: 'PodTemplateSpec' } },
    4: { name: 'strategy', kind: { message: 'DeploymentStrategy' } },
    5: { name: 'minReadySeconds', kind: 'int' },
    6: { name: 'revisionHistoryLimit', kind: 'int', optional: true },
    7: { name: 'paused', kind: 'bool' },
    9: { name: 'progressDeadlineSeconds', kind: 'int', optional: true },
  },
  DeploymentStrategy: { 1: { name: 'type', kind: 'string' } },
  LabelSelector: {
    1: { name: 'matchLabels', kind: { map: 'string' } },
    2: { name: 'matchExpressions', kind: { message: 'LabelSelectorRequirement' }, repeated: true },
  },
  LabelSelectorRequirement: {
    1: { name: 'key', kind: 'string' },
    2: { name: 'operator', kind: 'string' },
    3: { name: 'values', kind: 'string', repeated: true },
  },
  PodTemplateSpec: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'PodSpec' } },
  },
  // A Pod itself: what `kubectl debug` sends (node/<name>: the host's namespaces, its root mounted,
  // every taint tolerated; --copy-to: a copy of a pod). Its status is not read.
  Pod: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'PodSpec' } },
  },
  PodSpec: {
    1: { name: 'volumes', kind: { message: 'Volume' }, repeated: true },
    2: { name: 'containers', kind: { message: 'Container' }, repeated: true },
    3: { name: 'restartPolicy', kind: 'string' },
    4: { name: 'terminationGracePeriodSeconds', kind: 'int', optional: true },
    5: { name: 'activeDeadlineSeconds', kind: 'int', optional: true },
    6: { name: 'dnsPolicy', kind: 'string' },
    7: { name: 'nodeSelector', kind: { map: 'string' } },
    8: { name: 'serviceAccountName', kind: 'string' },
    9: { name: 'serviceAccount', kind: 'string' },
    10: { name: 'nodeName', kind: 'string' },
    11: { name: 'hostNetwork', kind: 'bool' },
    12: { name: 'hostPID', kind: 'bool' },
    13: { name: 'hostIPC', kind: 'bool' },
    14: { name: 'securityContext', kind: { message: 'PodSecurityContext' } },
    15: { name: 'imagePullSecrets', kind: { message: 'LocalObjectReference' }, repeated: true },
    16: { name: 'hostname', kind: 'string' },
    17: { name: 'subdomain', kind: 'string' },
    19: { name: 'schedulerName', kind: 'string' },
    20: { name: 'initContainers', kind: { message: 'Container' }, repeated: true },
    21: { name: 'automountServiceAccountToken', kind: 'bool', optional: true },
    22: { name: 'tolerations', kind: { message: 'Toleration' }, repeated: true },
    24: { name: 'priorityClassName', kind: 'string' },
    25: { name: 'priority', kind: 'int', optional: true },
    27: { name: 'shareProcessNamespace', kind: 'bool', optional: true },
    30: { name: 'enableServiceLinks', kind: 'bool', optional: true },
  },
  // The JSON form has the volume source's one field beside the name (Go's inline struct).
  Volume: { 1: { name: 'name', kind: 'string' }, 2: { name: 'volumeSource', kind: { message: 'VolumeSource' }, inline: true } },
  VolumeSource: {
    1: { name: 'hostPath', kind: { message: 'HostPathVolumeSource' } },
    2: { name: 'emptyDir', kind: { message: 'EmptyDirVolumeSource' } },
    6: { name: 'secret', kind: { message: 'SecretVolumeSource' } },
    10: { name: 'persistentVolumeClaim', kind: { message: 'PersistentVolumeClaimVolumeSource' } },
    19: { name: 'configMap', kind: { message: 'ConfigMapVolumeSource' } },
  },
  HostPathVolumeSource: { 1: { name: 'path', kind: 'string' }, 2: { name: 'type', kind: 'string', optional: true } },
  EmptyDirVolumeSource: { 1: { name: 'medium', kind: 'string' }, 2: { name: 'sizeLimit', kind: 'quantity', optional: true } },
  SecretVolumeSource: {
    1: { name: 'secretName', kind: 'string' }, 2: { name: 'items', kind: { message: 'KeyToPath' }, repeated: true },
    3: { name: 'defaultMode', kind: 'int', optional: true }, 4: { name: 'optional', kind: 'bool', optional: true },
  },
  ConfigMapVolumeSource: {
    1: { name: 'localObjectReference', kind: { message: 'LocalObjectReference' }, inline: true }, 2: { name: 'items', kind: { message: 'KeyToPath' }, repeated: true },
    3: { name: 'defaultMode', kind: 'int', optional: true }, 4: { name: 'optional', kind: 'bool', optional: true },
  },
  PersistentVolumeClaimVolumeSource: { 1: { name: 'claimName', kind: 'string' }, 2: { name: 'readOnly', kind: 'bool' } },
  KeyToPath: { 1: { name: 'key', kind: 'string' }, 2: { name: 'path', kind: 'string' }, 3: { name: 'mode', kind: 'int', optional: true } },
  Toleration: {
    1: { name: 'key', kind: 'string' }, 2: { name: 'operator', kind: 'string' }, 3: { name: 'value', kind: 'string' },
    4: { name: 'effect', kind: 'string' }, 5: { name: 'tolerationSeconds', kind: 'int', optional: true },
  },
  PodSecurityContext: {
    2: { name: 'runAsUser', kind: 'int', optional: true }, 3: { name: 'runAsNonRoot', kind: 'bool', optional: true },
    4: { name: 'supplementalGroups', kind: 'int', repeated: true }, 5: { name: 'fsGroup', kind: 'int', optional: true },
    6: { name: 'runAsGroup', kind: 'int', optional: true }, 10: { name: 'seccompProfile', kind: { message: 'SeccompProfile' } },
  },
  SecurityContext: {
    1: { name: 'capabilities', kind: { message: 'Capabilities' } }, 2: { name: 'privileged', kind: 'bool', optional: true },
    4: { name: 'runAsUser', kind: 'int', optional: true }, 5: { name: 'runAsNonRoot', kind: 'bool', optional: true },
    6: { name: 'readOnlyRootFilesystem', kind: 'bool', optional: true }, 7: { name: 'allowPrivilegeEscalation', kind: 'bool', optional: true },
    8: { name: 'runAsGroup', kind: 'int', optional: true }, 11: { name: 'seccompProfile', kind: { message: 'SeccompProfile' } },
  },
  Capabilities: { 1: { name: 'add', kind: 'string', repeated: true }, 2: { name: 'drop', kind: 'string', repeated: true } },
  SeccompProfile: { 1: { name: 'type', kind: 'string' }, 2: { name: 'localhostProfile', kind: 'string', optional: true } },
  Container: {
    1: { name: 'name', kind: 'string' },
    2: { name: 'image', kind: 'string' },
    3: { name: 'command', kind: 'string', repeated: true },
    4: { name: 'args', kind: 'string', repeated: true },
    5: { name: 'workingDir', kind: 'string' },
    6: { name: 'ports', kind: { message: 'ContainerPort' }, repeated: true },
    7: { name: 'env', kind: { message: 'EnvVar' }, repeated: true },
    8: { name: 'resources', kind: { message: 'ResourceRequirements' } },
    9: { name: 'volumeMounts', kind: { message: 'VolumeMount' }, repeated: true },
    13: { name: 'terminationMessagePath', kind: 'string' },
    14: { name: 'imagePullPolicy', kind: 'string' },
    15: { name: 'securityContext', kind: { message: 'SecurityContext' } },
    16: { name: 'stdin', kind: 'bool' },
    17: { name: 'stdinOnce', kind: 'bool' },
    18: { name: 'tty', kind: 'bool' },
    20: { name: 'terminationMessagePolicy', kind: 'string' },
  },
  ResourceRequirements: { 1: { name: 'limits', kind: { map: 'quantity' } }, 2: { name: 'requests', kind: { map: 'quantity' } } },
  VolumeMount: {
    1: { name: 'name', kind: 'string' }, 2: { name: 'readOnly', kind: 'bool' }, 3: { name: 'mountPath', kind: 'string' },
    4: { name: 'subPath', kind: 'string' }, 5: { name: 'mountPropagation', kind: 'string', optional: true }, 6: { name: 'subPathExpr', kind: 'string' },
  },
  ContainerPort: {
    1: { name: 'name', kind: 'string' },
    2: { name: 'hostPort', kind: 'int' },
    3: { name: 'containerPort', kind: 'int' },
    4: { name: 'protocol', kind: 'string' },
  },
  Service: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'ServiceSpec' } },
  },
  ServiceSpec: {
    1: { name: 'ports', kind: { message: 'ServicePort' }, repeated: true },
    2: { name: 'selector', kind: { map: 'string' } },
    3: { name: 'clusterIP', kind: 'string' },
    4: { name: 'type', kind: 'string' },
    10: { name: 'externalName', kind: 'string' },
  },
  ServicePort: {
    1: { name: 'name', kind: 'string' },
    2: { name: 'protocol', kind: 'string' },
    3: { name: 'port', kind: 'int' },
    4: { name: 'targetPort', kind: 'intOrString' },
    5: { name: 'nodePort', kind: 'int' },
  },
  Job: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'JobSpec' } },
  },
  JobSpec: {
    1: { name: 'parallelism', kind: 'int', optional: true },
    2: { name: 'completions', kind: 'int', optional: true },
    3: { name: 'activeDeadlineSeconds', kind: 'int', optional: true },
    4: { name: 'selector', kind: { message: 'LabelSelector' } },
    6: { name: 'template', kind: { message: 'PodTemplateSpec' } },
    7: { name: 'backoffLimit', kind: 'int', optional: true },
    8: { name: 'ttlSecondsAfterFinished', kind: 'int', optional: true },
    10: { name: 'suspend', kind: 'bool', optional: true },
  },
  CronJob: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'CronJobSpec' } },
  },
  CronJobSpec: {
    1: { name: 'schedule', kind: 'string' },
    2: { name: 'startingDeadlineSeconds', kind: 'int', optional: true },
    3: { name: 'concurrencyPolicy', kind: 'string' },
    4: { name: 'suspend', kind: 'bool', optional: true },
    5: { name: 'jobTemplate', kind: { message: 'JobTemplateSpec' } },
    6: { name: 'successfulJobsHistoryLimit', kind: 'int', optional: true },
    7: { name: 'failedJobsHistoryLimit', kind: 'int', optional: true },
    8: { name: 'timeZone', kind: 'string', optional: true },
  },
  // autoscaling/v1 and autoscaling/v2 name their messages alike: keyed by apiVersion.
  'autoscaling/v1/HorizontalPodAutoscaler': {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'HorizontalPodAutoscalerSpecV1' } },
  },
  HorizontalPodAutoscalerSpecV1: {
    1: { name: 'scaleTargetRef', kind: { message: 'CrossVersionObjectReference' } },
    2: { name: 'minReplicas', kind: 'int', optional: true },
    3: { name: 'maxReplicas', kind: 'int' },
    4: { name: 'targetCPUUtilizationPercentage', kind: 'int', optional: true },
  },
  CrossVersionObjectReference: {
    1: { name: 'kind', kind: 'string' },
    2: { name: 'name', kind: 'string' },
    3: { name: 'apiVersion', kind: 'string' },
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'HorizontalPodAutoscalerSpecV2' } },
  },
  HorizontalPodAutoscalerSpecV2: {
    1: { name: 'scaleTargetRef', kind: { message: 'CrossVersionObjectReference' } },
    2: { name: 'minReplicas', kind: 'int', optional: true },
    3: { name: 'maxReplicas', kind: 'int' },
    4: { name: 'metrics', kind: { message: 'MetricSpec' }, repeated: true },
    5: { name: 'behavior', kind: { message: 'HorizontalPodAutoscalerBehavior' } },
  },
  MetricSpec: {
    1: { name: 'type', kind: 'string' },
    4: { name: 'resource', kind: { message: 'ResourceMetricSource' } },
    7: { name: 'containerResource', kind: { message: 'ContainerResourceMetricSource' } },
  },
  ResourceMetricSource: {
    1: { name: 'name', kind: 'string' },
    2: { name: 'target', kind: { message: 'MetricTarget' } },
  },
  ContainerResourceMetricSource: {
    1: { name: 'name', kind: 'string' },
    2: { name: 'target', kind: { message: 'MetricTarget' } },
    3: { name: 'container', kind: 'string' },
  },
  MetricTarget: {
    1: { name: 'type', kind: 'string' },
    2: { name: 'value', kind: 'quantity' },
    3: { name: 'averageValue', kind: 'quantity' },
    4: { name: 'averageUtilization', kind: 'int', optional: true },
  },
  HorizontalPodAutoscalerBehavior: {
    1: { name: 'scaleUp', kind: { message: 'HPAScalingRules' } },
    2: { name: 'scaleDown', kind: { message: 'HPAScalingRules' } },
  },
  HPAScalingRules: {
    1: { name: 'selectPolicy', kind: 'string', optional: true },
    2: { name: 'policies', kind: { message: 'HPAScalingPolicy' }, repeated: true },
    3: { name: 'stabilizationWindowSeconds', kind: 'int', optional: true },
  },
  HPAScalingPolicy: {
    1: { name: 'type', kind: 'string' },
    2: { name: 'value', kind: 'int' },
    3: { name: 'periodSeconds', kind: 'int' },
  },
  JobTemplateSpec: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'JobSpec' } },
  },
  PriorityClass: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'value', kind: 'int', optional: true },
    3: { name: 'globalDefault', kind: 'bool' },
    4: { name: 'description', kind: 'string' },
    5: { name: 'preemptionPolicy', kind: 'string', optional: true },
  },
  ResourceQuota: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'ResourceQuotaSpec' } },
  },
  ResourceQuotaSpec: {
    1: { name: 'hard', kind: { map: 'quantity' } },
    2: { name: 'scopes', kind: 'string', repeated: true },
    3: { name: 'scopeSelector', kind: { message: 'ScopeSelector' } },
  },
  ScopeSelector: { 1: { name: 'matchExpressions', kind: { message: 'ScopedResourceSelectorRequirement' }, repeated: true } },
  ScopedResourceSelectorRequirement: {
    1: { name: 'scopeName', kind: 'string' },
    2: { name: 'operator', kind: 'string' },
    3: { name: 'values', kind: 'string', repeated: true },
  },
  Quantity: { 1: { name: 'string', kind: 'string' } },
  PodDisruptionBudget: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'spec', kind: { message: 'PodDisruptionBudgetSpec' } },
  },
  PodDisruptionBudgetSpec: {
    1: { name: 'minAvailable', kind: 'intOrString', optional: true },
    2: { name: 'selector', kind: { message: 'LabelSelector' } },
    3: { name: 'maxUnavailable', kind: 'intOrString', optional: true },
  },
  IntOrString: {
    1: { name: 'type', kind: 'int' },
    2: { name: 'intVal', kind: 'int' },
    3: { name: 'strVal', kind: 'string' },
  },
  Role: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'rules', kind: { message: 'PolicyRule' }, repeated: true },
  },
  ClusterRole: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'rules', kind: { message: 'PolicyRule' }, repeated: true },
  },
  PolicyRule: {
    1: { name: 'verbs', kind: 'string', repeated: true },
    2: { name: 'apiGroups', kind: 'string', repeated: true },
    3: { name: 'resources', kind: 'string', repeated: true },
    4: { name: 'resourceNames', kind: 'string', repeated: true },
    5: { name: 'nonResourceURLs', kind: 'string', repeated: true },
  },
  RoleBinding: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'subjects', kind: { message: 'Subject' }, repeated: true },
    3: { name: 'roleRef', kind: { message: 'RoleRef' } },
  },
  ClusterRoleBinding: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'subjects', kind: { message: 'Subject' }, repeated: true },
    3: { name: 'roleRef', kind: { message: 'RoleRef' } },
  },
  Subject: {
    1: { name: 'kind', kind: 'string' },
    2: { name: 'apiGroup', kind: 'string' },
    3: { name: 'name', kind: 'string' },
    4: { name: 'namespace', kind: 'string' },
  },
  RoleRef: {
    1: { name: 'apiGroup', kind: 'string' },
    2: { name: 'kind', kind: 'string' },
    3: { name: 'name', kind: 'string' },
  },
  EnvVar: { 1: { name: 'name', kind: 'string' }, 2: { name: 'value', kind: 'string' } },
  ServiceAccount: {
    1: { name: 'metadata', kind: { message: 'ObjectMeta' } },
    2: { name: 'secrets', kind: { message: 'ObjectReference' }, repeated: true },
    3: { name: 'imagePullSecrets', kind: { message: 'LocalObjectReference' }, repeated: true },
    4: { name: 'automountServiceAccountToken', kind: 'bool' },
  },
  // What `kubectl create token`, `kubectl auth can-i` and `kubectl drain` send.
  TokenRequest: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } }, 2: { name: 'spec', kind: { message: 'TokenRequestSpec' } } },
  TokenRequestSpec: {
    1: { name: 'audiences', kind: 'string', repeated: true },
    3: { name: 'boundObjectRef', kind: { message: 'BoundObjectReference' } },
    4: { name: 'expirationSeconds', kind: 'int', optional: true },
  },
  BoundObjectReference: { 1: { name: 'kind', kind: 'string' }, 2: { name: 'apiVersion', kind: 'string' }, 3: { name: 'name', kind: 'string' }, 4: { name: 'uid', kind: 'string' } },
  // `kubectl auth whoami`: only metadata (its status is the answer).
  SelfSubjectReview: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } } },
  SelfSubjectAccessReview: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } }, 2: { name: 'spec', kind: { message: 'SubjectAccessReviewSpec' } } },
  SubjectAccessReview: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } }, 2: { name: 'spec', kind: { message: 'SubjectAccessReviewSpec' } } },
  // SelfSubjectAccessReviewSpec has fields 1 and 2 of SubjectAccessReviewSpec.
  SubjectAccessReviewSpec: {
    1: { name: 'resourceAttributes', kind: { message: 'ResourceAttributes' } },
    2: { name: 'nonResourceAttributes', kind: { message: 'NonResourceAttributes' } },
    3: { name: 'user', kind: 'string' },
    4: { name: 'groups', kind: 'string', repeated: true },
    6: { name: 'uid', kind: 'string' },
  },
  ResourceAttributes: {
    1: { name: 'namespace', kind: 'string' }, 2: { name: 'verb', kind: 'string' }, 3: { name: 'group', kind: 'string' },
    4: { name: 'version', kind: 'string' }, 5: { name: 'resource', kind: 'string' }, 6: { name: 'subresource', kind: 'string' },
    7: { name: 'name', kind: 'string' },
  },
  NonResourceAttributes: { 1: { name: 'path', kind: 'string' }, 2: { name: 'verb', kind: 'string' } },
  SelfSubjectRulesReview: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } }, 2: { name: 'spec', kind: { message: 'SelfSubjectRulesReviewSpec' } } },
  SelfSubjectRulesReviewSpec: { 1: { name: 'namespace', kind: 'string' } },
  Eviction: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } }, 2: { name: 'deleteOptions', kind: { message: 'DeleteOptions' } } },
  // certificates.k8s.io/v1: what `kubectl certificate approve|deny` sends back.
  CertificateSigningRequest: { 1: { name: 'metadata', kind: { message: 'ObjectMeta' } }, 2: { name: 'spec', kind: { message: 'CertificateSigningRequestSpec' } }, 3: { name: 'status', kind: { message: 'CertificateSigningRequestStatus' } } },
  CertificateSigningRequestSpec: {
    1: { name: 'request', kind: 'bytes' }, 2: { name: 'username', kind: 'string' }, 3: { name: 'uid', kind: 'string' }, 4: { name: 'groups', kind: 'string', repeated: true },
    5: { name: 'usages', kind: 'string', repeated: true }, 7: { name: 'signerName', kind: 'string' }, 8: { name: 'expirationSeconds', kind: 'int', optional: true },
  },
  CertificateSigningRequestStatus: { 1: { name: 'conditions', kind: { message: 'CertificateSigningRequestCondition' }, repeated: true }, 2: { name: 'certificate', kind: 'bytes' } },
  CertificateSigningRequestCondition: {
    1: { name: 'type', kind: 'string' }, 6: { name: 'status', kind: 'string' }, 2: { name: 'reason', kind: 'string' }, 3: { name: 'message', kind: 'string' },
    4: { name: 'lastUpdateTime', kind: 'time' }, 5: { name: 'lastTransitionTime', kind: 'time' },
  },
  Time: { 1: { name: 'seconds', kind: 'int' }, 2: { name: 'nanos', kind: 'int' } },
  DeleteOptions: {
    1: { name: 'gracePeriodSeconds', kind: 'int', optional: true },
    4: { name: 'propagationPolicy', kind: 'string' },
    5: { name: 'dryRun', kind: 'string', repeated: true },
  },
};

export class ProtobufError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('ProtobufMalformed', message, options);
  }
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length) throw new ProtobufError('truncated varint');
      const byte = this.buf[this.pos++];
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new ProtobufError('varint too long');
    }
  }
  bytes(): Buffer {
    const length = this.varint();
    if (this.pos + length > this.buf.length) throw new ProtobufError('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new ProtobufError(`unsupported wire type ${wireType}`);
  }
}

function decodeMessage(buf: Buffer, type: string): Record<string, unknown> {
  const fields = MESSAGES[type];
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  while (!r.done()) {
    const tag = r.varint();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    const field = fields[number];
    if (!field) {
      r.skip(wireType);
      continue;
    }
    const value = decodeValue(r, field, wireType);
    if (field.inline) Object.assign(out, value);
    else if (typeof field.kind === 'object' && 'map' in field.kind) {
      const [k, v] = value as [string, unknown];
      out[field.name] = { ...(out[field.name] as Record<string, unknown> | undefined), [k]: v };
    } else if (field.repeated) ((out[field.name] ??= []) as unknown[]).push(value);
    // Go's JSON leaves out empty values (omitempty); so do we.
    else if (field.optional || (value !== '' && value !== 0 && value !== false)) out[field.name] = value;
  }
  return out;
}

function decodeValue(r: Reader, field: Field, wireType: number): unknown {
  const kind = field.kind;
  if (kind === 'int') return r.varint();
  if (kind === 'bool') return r.varint() !== 0;
  const raw = wireType === 2 ? r.bytes() : (() => {
    throw new ProtobufError(`field ${field.name} has wire type ${wireType}`);
  })();
  if (kind === 'string') return raw.toString('utf8');
  if (kind === 'bytes') return raw.toString('base64');
  if (kind === 'intOrString') {
    // type 1 is a string, anything else an int (an absent intVal is Go's zero).
    const v = decodeMessage(raw, 'IntOrString') as { type?: number; intVal?: number; strVal?: string };
    return v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0);
  }
  if (kind === 'quantity') return String(decodeMessage(raw, 'Quantity').string ?? '');
  if (kind === 'time') {
    const t = decodeMessage(raw, 'Time') as { seconds?: number };
    return rfc3339(new Date((t.seconds ?? 0) * 1000));
  }
  if ('message' in kind) return decodeMessage(raw, kind.message);
  // A map entry: key = 1, value = 2.
  const entry = new Reader(raw);
  let key = '';
  let value = '';
  while (!entry.done()) {
    const tag = entry.varint();
    const bytes = entry.bytes();
    if (tag >> 3 === 1) key = bytes.toString('utf8');
    else if (tag >> 3 === 2) {
      // A resource.Quantity is a message of one string field.
      value = kind.map === 'bytes' ? bytes.toString('base64') : kind.map === 'quantity' ? String(decodeMessage(bytes, 'Quantity').string ?? '') : bytes.toString('utf8');
    }
  }
  return [key, value];
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decodes a `k8s\0`-framed protobuf body into the JSON form of the object. */
export function decodeKubernetesProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw new ProtobufError('the body does not start with the Kubernetes protobuf magic "k8s\\0"');
  const envelope = decodeMessage(body.subarray(4), 'Unknown') as { typeMeta?: { apiVersion?: string; kind?: string }; raw?: string };
  const kind = envelope.typeMeta?.kind ?? '';
  const message = MESSAGES[`${envelope.typeMeta?.apiVersion}/${kind}`] ? `${envelope.typeMeta?.apiVersion}/${kind}` : kind;
  if (!MESSAGES[message] || !envelope.raw) throw new ProtobufError(`protobuf bodies of kind "${kind}" are not supported; send JSON`);
  const object = decodeMessage(Buffer.from(envelope.raw, 'base64'), message);
  return { apiVersion: envelope.typeMeta?.apiVersion, kind, ...object };
}
