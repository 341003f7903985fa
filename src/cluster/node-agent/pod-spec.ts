// How the node agent reads a pod: what runs a container (a bosun component as a process, the
// built-in echo server, or nothing — simulated), the environment it gets (env and envFrom with
// the downward API's fieldRefs, ConfigMap and Secret keys), the command line, and the pod's IP
// from the node's podCIDR. Pure except for resolving ConfigMap/Secret references.
import { fileURLToPath } from 'node:url';
import type * as api from '../../api/index.js';
import { numberToIp, parseCidr } from '../../common/ipv4.js';
import { isNotFound, resources, type KubeClient } from '../../kube/index.js';

export const COMPONENT_IMAGE_PREFIX = 'bosun.local/';
export const ECHO_COMPONENT = 'echo';
export const ECHO_DEFAULT_PORT = 8080;

export type ContainerKind = 'component' | 'echo' | 'simulated';

/** `bosun.local/<name>[:tag][@digest]` → the component's name; undefined for other images. */
export function componentOf(image: string): string | undefined {
  if (!image.startsWith(COMPONENT_IMAGE_PREFIX)) return undefined;
  return image.slice(COMPONENT_IMAGE_PREFIX.length).split('@')[0].split(':')[0] || undefined;
}

export function containerKind(image: string): ContainerKind {
  const component = componentOf(image);
  if (component === undefined) return 'simulated';
  return component === ECHO_COMPONENT ? 'echo' : 'component';
}

/** The bosun subcommand line of a component container: command then args, without a leading
 *  `bosun`, with `$(VAR)` references to the container's environment expanded as the kubelet does. */
export function componentArgv(container: Pick<api.Container, 'command' | 'args'>, env: Record<string, string> = {}): string[] {
  const argv = [...(container.command ?? []), ...(container.args ?? [])].map((a) => expand(String(a), env));
  if (argv.length > 0 && /(^|\/)bosun(\.js)?$/.test(argv[0])) argv.shift();
  return argv;
}

/** The first declared container port, or the echo server's default. */
export function echoPort(container: Pick<api.Container, 'ports'>): number {
  return container.ports?.[0]?.containerPort ?? ECHO_DEFAULT_PORT;
}

/** A probe's or Service's port: a number, or the name of one of the container's ports. */
export function resolvePort(port: number | string | undefined, container: Pick<api.Container, 'ports'> | undefined): number | undefined {
  if (typeof port === 'number') return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return container?.ports?.find((p) => p.name === port)?.containerPort;
}

/** The downward API: a fieldRef path's value for this pod. */
export function fieldRefValue(pod: api.Pod, fieldPath: string, podIP: string, hostIP: string): string {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (m) return pod.metadata?.[m[1] as 'labels' | 'annotations']?.[m[2]] ?? '';
  switch (fieldPath) {
    case 'metadata.name': return pod.metadata.name;
    case 'metadata.namespace': return pod.metadata.namespace ?? '';
    case 'metadata.uid': return pod.metadata.uid ?? '';
    case 'spec.nodeName': return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP': return podIP;
    case 'status.podIPs': return podIP;
    case 'status.hostIP': return hostIP;
    case 'status.hostIPs': return hostIP;
    default: return '';
  }
}

/** The container's environment as the kubelet builds it (envFrom first, env after and winning). */
export async function containerEnv(client: KubeClient | undefined, pod: api.Pod, container: api.Container, podIP: string, hostIP: string): Promise<Record<string, string>> {
  const ns = pod.metadata.namespace;
  const cache = new Map<string, api.ConfigMap | api.Secret | undefined>();
  const source = async (kind: 'configMaps' | 'secrets', name: string | undefined): Promise<api.ConfigMap | api.Secret | undefined> => {
    const key = `${kind}/${name}`;
    if (!cache.has(key)) {
      if (!client) throw new Error(`${kind === 'configMaps' ? 'configmap' : 'secret'} "${name}": a static pod may not refer to API objects`);
      try {
        // The name is required by the API server's validation of the pod.
        cache.set(key, kind === 'configMaps' ? await client.get(resources.configMaps, name ?? '', ns) : await client.get(resources.secrets, name ?? '', ns));
      } catch (e) {
        if (!isNotFound(e)) throw e;
        cache.set(key, undefined);
      }
    }
    return cache.get(key);
  };
  const valuesOf = (kind: 'configMaps' | 'secrets', obj: api.ConfigMap | api.Secret | undefined): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj?.data ?? {})) out[k] = kind === 'secrets' ? Buffer.from(v, 'base64').toString('utf8') : v;
    return out;
  };
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const kind = from.configMapRef ? 'configMaps' : from.secretRef ? 'secrets' : undefined;
    const ref = from.configMapRef ?? from.secretRef;
    if (!kind || !ref) continue;
    const obj = await source(kind, ref.name);
    if (!obj && !ref.optional) throw new Error(`${kind === 'configMaps' ? 'configmap' : 'secret'} "${ref.name}" not found`);
    for (const [k, v] of Object.entries(valuesOf(kind, obj))) env[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined || !e.valueFrom) {
      env[e.name] = expand(String(e.value ?? ''), env);
      continue;
    }
    const vf = e.valueFrom;
    if (vf.fieldRef) env[e.name] = fieldRefValue(pod, vf.fieldRef.fieldPath, podIP, hostIP);
    else if (vf.configMapKeyRef || vf.secretKeyRef) {
      const kind = vf.configMapKeyRef ? 'configMaps' : 'secrets';
      const ref = (vf.configMapKeyRef ?? vf.secretKeyRef)!;
      const value = valuesOf(kind, await source(kind, ref.name))[ref.key];
      if (value === undefined && !ref.optional) throw new Error(`couldn't find key ${ref.key} in ${kind === 'configMaps' ? 'ConfigMap' : 'Secret'} ${ns}/${ref.name}`);
      if (value !== undefined) env[e.name] = value;
    } else if (vf.resourceFieldRef) {
      env[e.name] = String(container.resources?.limits?.[vf.resourceFieldRef.resource.replace(/^limits\./, '')] ?? '');
    }
  }
  return env;
}

/** `$(VAR)` references to variables defined before, as the kubelet expands them; `$$` escapes. */
export function expand(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name?: string) => (whole === '$$' ? '$' : name !== undefined && name in env ? env[name] : whole));
}

/**
 * The pod CIDR of machine N (its node IP 127.0.1.N): the N-th /24 of the cluster's pod network —
 * 127.1.N.0/24 by default. `configured` is the KubeletConfiguration's podCIDR: a /24 is the node's
 * own; a wider range is the cluster's (a workload cluster's, from Cluster.spec.clusterNetwork.pods),
 * of which the machine takes its /24, as kube-controller-manager's node CIDR allocation would give it.
 */
export function podCidrFor(nodeIP: string, configured?: string): string {
  const n = Number(nodeIP.split('.')[3]);
  const range = configured ? parseCidr(configured) : undefined;
  if (range?.bits === 24) return configured!;
  if (range && range.bits < 24 && n * 256 < 2 ** (32 - range.bits)) return `${numberToIp(range.base + n * 256)}/24`;
  return `127.1.${n}.0/24`;
}

/** The first free address of a /24 pod CIDR, from .2 (.1 being the node's gateway by convention). */
export function allocatePodIP(cidr: string, taken: Set<string>): string | undefined {
  const prefix = cidr.replace(/\.0\/24$/, '.');
  for (let i = 2; i < 255; i++) if (!taken.has(`${prefix}${i}`)) return `${prefix}${i}`;
  return undefined;
}

/** How to run a script of this module's directory with node: compiled (.js) or through tsx (.ts). */
export function scriptCommand(name: string): string[] {
  const self = fileURLToPath(import.meta.url);
  const compiled = self.endsWith('.js');
  const script = fileURLToPath(new URL(`./${name}${compiled ? '.js' : '.ts'}`, import.meta.url));
  return compiled ? [process.execPath, script] : [process.execPath, '--import', import.meta.resolve('tsx/esm'), script];
}

/** A pod a Job controls: its simulated containers run to completion (kwok's pod-complete stage). */
export function ownedByJob(pod: api.Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.kind === 'Job' && r.apiVersion.startsWith('batch/'));
}
