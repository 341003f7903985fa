// kube-apiserver's defaults for a new Pod's spec (k8s.io/kubernetes pkg/apis/core/v1/defaults.go),
// the ones every `kubectl get pod -o yaml` shows: each container's image pull policy (Always for
// an image tagged `latest` or not at all, else IfNotPresent), termination message path and
// policy, ports' protocol, probes' timings and an HTTP probe's path and scheme, requests taken
// from limits where a container sets only limits; the pod's empty securityContext,
// enableServiceLinks, the deprecated serviceAccount beside serviceAccountName; volumes' file
// modes (0644) and a hostPath's type. Pure: it changes the spec it is given. Applied to pods
// (on every write of one that has them: see defaulted) — a pod template (a Deployment's) is left
// as written, so that a template's hash does not change under a Deployment made before them.
// A part that is not an object (a malformed spec) is passed over: validation refuses it, with a
// clear message, rather than the defaults failing with a TypeError.
import type * as api from '../../api/index.js';
import { isPlainObject } from '../../common/json.js';

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
  // A container that sets only limits requests as much (kube's SetDefaults_Pod).
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

/** Applies the defaults to a pod's spec (after the pod's own: restart policy, DNS policy, service account). */
export function defaultNewPodSpec(spec: api.PodSpec): void {
  // What is not a list of objects is left for validation to refuse.
  const objects = <T>(list: unknown): T[] => (Array.isArray(list) ? (list.filter(isPlainObject) as T[]) : []);
  for (const c of [...objects<api.Container>(spec.initContainers), ...objects<api.Container>(spec.containers)]) defaultContainer(c);
  for (const v of objects<api.Volume>(spec.volumes)) defaultVolume(v);
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  // The deprecated field v1 still writes beside the name (kube's conversion).
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
}

/** Whether a stored pod's spec has these defaults: it was made since they exist (each container has its termination message path). */
export function defaulted(spec: api.PodSpec | undefined): boolean {
  return spec?.enableServiceLinks !== undefined && Array.isArray(spec.containers) && spec.containers.every((c) => Boolean(c?.terminationMessagePath));
}
