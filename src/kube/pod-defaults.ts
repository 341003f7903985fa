// kube-apiserver's defaults for a pod's spec (k8s.io/kubernetes pkg/apis/core/v1/defaults.go), the
// ones every `kubectl get pod -o yaml` shows, in two parts as kube has them:
// - what every PodSpec gets, a pod's or a workload's pod template's (SetDefaults_PodSpec and the
//   defaults of the types inside it): the restart and DNS policies, the scheduler, a 30 s grace
//   period and an empty securityContext; each container's image pull policy (Always for an image
//   tagged `latest` or not at all, else IfNotPresent), termination message path and policy,
//   ports' protocol, probes' timings and an HTTP probe's path and scheme; volumes' file modes
//   (0644) and a hostPath's type; the deprecated serviceAccount beside serviceAccountName;
// - what only a Pod gets (SetDefaults_Pod): requests taken from limits where a container sets only
//   limits, and enableServiceLinks.
// Pure: it changes the spec it is given. The API server applies them to pods and to the workloads'
// templates — on every write of an object stored with them (see defaulted, templateDefaulted), so
// that an object made before they existed keeps its spec (a pod's is immutable) and its template's
// hash (a DaemonSet's pods are told apart by it). A part that is not an object (a malformed spec)
// is passed over: validation refuses it, with a clear message, rather than the defaults failing
// with a TypeError. A Deployment's controller compares templates as defaulted (template-hash.ts),
// as kube-apiserver hands every client objects already defaulted.
import type * as api from '../api/index.js';
import { isPlainObject } from '../common/json.js';

/** The mode of the files of secret, configMap, downwardAPI and projected volumes: 0644. */
const DEFAULT_MODE = 0o644;

/** kube's rule: an image with the `latest` tag, or with neither tag nor digest, is pulled always. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const [name, digest] = image.split('@');
  const lastPart = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  const tag = colon >= 0 ? lastPart.slice(colon + 1) : digest ? '' : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(probe: api.Container['livenessProbe']): void {
  if (!isPlainObject(probe)) return;
  probe.timeoutSeconds ??= 1;
  probe.periodSeconds ??= 10;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (isPlainObject(probe.httpGet)) {
    probe.httpGet.path ??= '/';
    probe.httpGet.scheme ??= 'HTTP';
  }
}

function defaultContainer(c: api.Container): void {
  if (!c.imagePullPolicy && typeof c.image === 'string') c.imagePullPolicy = defaultPullPolicy(c.image);
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  if (Array.isArray(c.ports)) for (const port of c.ports) if (isPlainObject(port)) port.protocol ||= 'TCP';
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

/** A container that sets only limits requests as much (kube's SetDefaults_Pod: a pod's, not a template's). */
function requestsFromLimits(c: api.Container): void {
  const limits = isPlainObject(c.resources) ? c.resources.limits : undefined;
  if (isPlainObject(limits) && Object.keys(limits).length > 0 && (c.resources!.requests === undefined || isPlainObject(c.resources!.requests))) {
    const requests = (c.resources!.requests ??= {});
    for (const [resource, quantity] of Object.entries(limits)) if (!(resource in requests)) requests[resource] = quantity;
  }
}

function defaultVolume(v: api.Volume): void {
  if (isPlainObject(v.hostPath)) v.hostPath.type ??= '';
  for (const source of [v.secret, v.configMap, v.downwardAPI, v.projected]) if (isPlainObject(source)) source.defaultMode ??= DEFAULT_MODE;
}

/** What is not a list of objects is left for validation to refuse. */
const objects = <T>(list: unknown): T[] => (Array.isArray(list) ? (list.filter(isPlainObject) as T[]) : []);

/** The defaults of any PodSpec, a pod's or a pod template's. */
export function defaultPodSpec(spec: api.PodSpec): void {
  spec.restartPolicy ||= 'Always';
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.schedulerName ||= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  for (const c of [...objects<api.Container>(spec.initContainers), ...objects<api.Container>(spec.containers)]) defaultContainer(c);
  for (const v of objects<api.Volume>(spec.volumes)) defaultVolume(v);
  // The deprecated field v1 still writes beside the name (kube's conversion).
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
}

/** Applies a pod's defaults to its spec: those of any PodSpec, then those only a Pod gets. */
export function defaultNewPodSpec(spec: api.PodSpec): void {
  defaultPodSpec(spec);
  for (const c of [...objects<api.Container>(spec.initContainers), ...objects<api.Container>(spec.containers)]) requestsFromLimits(c);
  spec.enableServiceLinks ??= true;
}

/** Whether a stored pod's spec has these defaults: it was made since they exist (each container has its termination message path). */
export function defaulted(spec: api.PodSpec | undefined): boolean {
  return spec?.enableServiceLinks !== undefined && Array.isArray(spec.containers) && spec.containers.every((c) => Boolean(c?.terminationMessagePath));
}

/**
 * Whether a stored pod template's spec has the PodSpec defaults: it was written since templates get
 * them (the scheduler named, every container with its termination message path and pull policy).
 */
export function templateDefaulted(spec: api.PodSpec | undefined): boolean {
  return Boolean(spec?.schedulerName) && spec?.securityContext !== undefined && Array.isArray(spec?.containers)
    && spec.containers.every((c) => Boolean(c?.terminationMessagePath && c.imagePullPolicy));
}

/**
 * A workload's pod template as the API server writes it: defaulted when it is new (no `previous`)
 * or was stored defaulted; one stored before templates got defaults is left as it is.
 */
export function defaultPodTemplate(template: unknown, previous: api.PodTemplateSpec | undefined, updating: boolean): void {
  if (!isPlainObject(template) || !isPlainObject(template.spec)) return;
  if (updating && !templateDefaulted(previous?.spec)) return;
  defaultPodSpec(template.spec as api.PodSpec);
}
