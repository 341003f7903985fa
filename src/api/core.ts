// The built-in kinds bosun's components read and write, from client-node's models made wire-typed
// (src/api/meta.ts): Kubernetes' own API types, kept current by the client-node release bosun pins.
import type * as k8s from '@kubernetes/client-node';
import type { CoreKind, Wire } from './meta.js';

// core/v1
export type Namespace = CoreKind<k8s.V1Namespace>;
export type Node = CoreKind<k8s.V1Node>;
export type Pod = CoreKind<k8s.V1Pod>;
export type Service = CoreKind<k8s.V1Service>;
export type ServiceAccount = CoreKind<k8s.V1ServiceAccount>;
export type ConfigMap = CoreKind<k8s.V1ConfigMap>;
export type Secret = CoreKind<k8s.V1Secret>;
export type Event = CoreKind<k8s.CoreV1Event>;
export type Endpoints = CoreKind<k8s.V1Endpoints>;
export type EndpointSlice = CoreKind<k8s.V1EndpointSlice>;
export type PersistentVolume = CoreKind<k8s.V1PersistentVolume>;
export type PersistentVolumeClaim = CoreKind<k8s.V1PersistentVolumeClaim>;
// apps, batch, coordination, policy
export type Deployment = CoreKind<k8s.V1Deployment>;
export type DaemonSet = CoreKind<k8s.V1DaemonSet>;
export type ReplicaSet = CoreKind<k8s.V1ReplicaSet>;
export type StatefulSet = CoreKind<k8s.V1StatefulSet>;
export type ControllerRevision = CoreKind<k8s.V1ControllerRevision>;
export type Job = CoreKind<k8s.V1Job>;
export type CronJob = CoreKind<k8s.V1CronJob>;
/** autoscaling/v2, the version HorizontalPodAutoscalers are stored at (autoscaling/v1 is a conversion of it). */
export type HorizontalPodAutoscaler = CoreKind<k8s.V2HorizontalPodAutoscaler>;
export type HorizontalPodAutoscalerV1 = CoreKind<k8s.V1HorizontalPodAutoscaler>;
export type MetricSpec = Wire<k8s.V2MetricSpec>;
export type MetricStatus = Wire<k8s.V2MetricStatus>;
export type HPAScalingRules = Wire<k8s.V2HPAScalingRules>;
export type ResourceQuota = CoreKind<k8s.V1ResourceQuota>;
/** On the wire an item's default limits are `default` (client-node's model calls the field `_default`). */
export type LimitRangeItem = Omit<Wire<k8s.V1LimitRangeItem>, '_default'> & { default?: Record<string, string> };
export type LimitRange = Omit<CoreKind<k8s.V1LimitRange>, 'spec'> & { spec?: { limits: LimitRangeItem[] } };
export type PriorityClass = CoreKind<k8s.V1PriorityClass>;
export type Lease = CoreKind<k8s.V1Lease>;
export type PodDisruptionBudget = CoreKind<k8s.V1PodDisruptionBudget>;
export type Eviction = CoreKind<k8s.V1Eviction>;
// storage.k8s.io
export type StorageClass = CoreKind<k8s.V1StorageClass>;
// apiextensions, certificates, rbac, authentication, authorization
export type CustomResourceDefinition = CoreKind<k8s.V1CustomResourceDefinition>;
export type CertificateSigningRequest = CoreKind<k8s.V1CertificateSigningRequest>;
export type ClusterRole = CoreKind<k8s.V1ClusterRole>;
export type ClusterRoleBinding = CoreKind<k8s.V1ClusterRoleBinding>;
export type Role = CoreKind<k8s.V1Role>;
export type RoleBinding = CoreKind<k8s.V1RoleBinding>;
export type TokenReview = CoreKind<k8s.V1TokenReview>;
export type SubjectAccessReview = CoreKind<k8s.V1SubjectAccessReview>;
// apiregistration (kube-aggregator)
export type APIService = CoreKind<k8s.V1APIService>;
// admissionregistration (dynamic admission webhooks)
export type MutatingWebhookConfiguration = CoreKind<k8s.V1MutatingWebhookConfiguration>;
export type ValidatingWebhookConfiguration = CoreKind<k8s.V1ValidatingWebhookConfiguration>;
export type MutatingWebhook = Wire<k8s.V1MutatingWebhook>;
export type ValidatingWebhook = Wire<k8s.V1ValidatingWebhook>;
export type WebhookRule = Wire<k8s.V1RuleWithOperations>;

/**
 * admission.k8s.io/v1 AdmissionReview, as the API server sends it to a webhook (request) and the
 * webhook answers (response). client-node has no model of it: it is never served, only posted.
 */
export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; status?: string; details?: unknown };
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

// Parts of the built-in kinds that code passes around on their own.
export type PodSpec = Wire<k8s.V1PodSpec>;
export type ScopedResourceSelectorRequirement = Wire<k8s.V1ScopedResourceSelectorRequirement>;
export type PodTemplateSpec = Wire<k8s.V1PodTemplateSpec>;
export type Container = Wire<k8s.V1Container>;
export type ContainerStatus = Wire<k8s.V1ContainerStatus>;
export type PodCondition = Wire<k8s.V1PodCondition>;
export type NodeCondition = Wire<k8s.V1NodeCondition>;
export type NodeAddress = Wire<k8s.V1NodeAddress>;
export type Taint = Wire<k8s.V1Taint>;
export type Toleration = Wire<k8s.V1Toleration>;
export type LabelSelector = Wire<k8s.V1LabelSelector>;
export type ServicePort = Wire<k8s.V1ServicePort>;
export type Volume = Wire<k8s.V1Volume>;
export type Probe = Wire<k8s.V1Probe>;
export type ObjectReference = Wire<k8s.V1ObjectReference>;
