// What the node agent starts from: the kubelet's files as Ignition wrote them into the machine root
// — the kubelet unit (its ExecStart flags, with drop-ins), the KubeletConfiguration it names with
// --config, and the kubeconfigs named by --bootstrap-kubeconfig and --kubeconfig. Parsing is pure;
// readKubeletFiles resolves every path inside the root, never on the host.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export const KUBELET_UNIT = '/etc/systemd/system/kubelet.service';
/** kubeadm's per-node kubelet flags (`KUBELET_KUBEADM_ARGS="…"`), which its drop-in adds to ExecStart. */
export const KUBEADM_FLAGS_ENV = '/var/lib/kubelet/kubeadm-flags.env';
/** The Kubernetes version the machine was installed with (one line, `v1.33.1`), which the node reports. */
export const KUBERNETES_VERSION_FILE = '/etc/bosun/kubernetes-version';

/** The flags of kubeadm-flags.env's KUBELET_KUBEADM_ARGS (as an EnvironmentFile: `NAME="value"` lines). Pure. */
export function parseKubeadmFlags(text: string): Map<string, string> {
  const m = /^\s*KUBELET_KUBEADM_ARGS\s*=\s*(?:"([^"]*)"|'([^']*)'|(.*))\s*$/m.exec(text);
  const args = (m?.[1] ?? m?.[2] ?? m?.[3] ?? '').trim();
  return parseUnitFlags(`ExecStart=/usr/bin/kubelet ${args}`);
}

/** The flags a kubelet unit's ExecStart gives the kubelet (`--name=value` and `--name value`). */
export function parseUnitFlags(unit: string, dropins: string[] = []): Map<string, string> {
  const flags = new Map<string, string>();
  // A drop-in's ExecStart replaces the unit's (after an empty `ExecStart=` reset, as systemd reads it).
  let execStart = '';
  for (const text of [unit, ...dropins]) {
    const joined = text.replace(/\\\r?\n/g, ' ');
    for (const line of joined.split(/\r?\n/)) {
      const m = /^\s*ExecStart\s*=\s*(.*)$/.exec(line);
      if (m) execStart = m[1].trim();
    }
  }
  const words = execStart.split(/\s+/).filter(Boolean).slice(1);
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (!word.startsWith('--')) continue;
    const eq = word.indexOf('=');
    if (eq > 0) flags.set(word.slice(2, eq), unquote(word.slice(eq + 1)));
    else if (words[i + 1] !== undefined && !words[i + 1].startsWith('--')) flags.set(word.slice(2), unquote(words[++i]));
    else flags.set(word.slice(2), 'true');
  }
  return flags;
}

function unquote(value: string): string {
  return value.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
}

/** `--node-labels` as the kubelet reads it: `k=v` pairs separated by commas, a bare key meaning "". */
export function parseNodeLabels(value: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const item of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = item.indexOf('=');
    if (eq < 0) labels[item] = '';
    else labels[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return labels;
}

/** `--register-with-taints` / registerWithTaints entries: `key=value:Effect` or `key:Effect`. */
export function parseTaints(value: string | undefined): Array<{ key: string; value?: string; effect: string }> {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean).map((item) => {
    const [kv, effect] = item.split(':');
    const [key, v] = kv.split('=');
    return v === undefined ? { key, effect } : { key, value: v, effect };
  });
}

/** A Go duration as the kubelet's config writes them (`10s`, `5m0s`, `1h`), in milliseconds. */
export function parseDuration(value: unknown, fallbackMs: number): number {
  if (typeof value !== 'string' || value === '') return fallbackMs;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let matched = '';
  for (const m of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(m[1]) * units[m[2]];
    matched += m[0];
  }
  return matched === value ? total : fallbackMs;
}

/**
 * The fields of a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) the node agent reads; the
 * file may hold any other.
 */
export interface KubeletConfiguration {
  maxPods?: number;
  systemReserved?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  evictionHard?: Record<string, string>;
  nodeStatusUpdateFrequency?: string;
  nodeStatusReportFrequency?: string;
  authentication?: { x509?: { clientCAFile?: string } };
  staticPodPath?: string;
  rotateCertificates?: boolean;
  serverTLSBootstrap?: boolean;
  registerWithTaints?: Array<{ key: string; value?: string; effect: string }>;
  /** The node's pod range (a /24), or the cluster's of which the node takes its /24 (pod-spec.ts podCidrFor). */
  podCIDR?: string;
  [field: string]: unknown;
}

export interface KubeletFiles {
  flags: Map<string, string>;
  /** The KubeletConfiguration (empty when the unit names none). */
  config: KubeletConfiguration;
  /** Root-relative paths as the unit names them. */
  bootstrapKubeconfigPath?: string;
  kubeconfigPath: string;
  nodeLabels: Record<string, string>;
  registerWithTaints: Array<{ key: string; value?: string; effect: string }>;
  /** `--cloud-provider`: "external" makes the node wait for the cloud-controller-manager. */
  cloudProvider?: string;
  /** The static pod directory, root-relative (staticPodPath, else --pod-manifest-path). */
  staticPodPath?: string;
  /** From /etc/bosun/kubernetes-version, when the machine has one. */
  kubernetesVersion?: string;
}

/** Reads the kubelet's unit and configuration from a machine root; throws saying what is missing. */
export function readKubeletFiles(root: string): KubeletFiles {
  const unitPath = join(root, KUBELET_UNIT);
  if (!existsSync(unitPath)) throw new Error(`no kubelet unit at ${KUBELET_UNIT} in the machine root: its Ignition config did not install the kubelet`);
  const dropinDir = `${unitPath}.d`;
  const dropins = existsSync(dropinDir) ? readdirSync(dropinDir).filter((n) => n.endsWith('.conf')).sort().map((n) => readFileSync(join(dropinDir, n), 'utf8')) : [];
  const flags = parseUnitFlags(readFileSync(unitPath, 'utf8'), dropins);
  // kubeadm's flags come after the unit's on the kubelet's command line: they win.
  const kubeadmFlags = join(root, KUBEADM_FLAGS_ENV);
  if (existsSync(kubeadmFlags)) for (const [k, v] of parseKubeadmFlags(readFileSync(kubeadmFlags, 'utf8'))) flags.set(k, v);
  const versionFile = join(root, KUBERNETES_VERSION_FILE);
  const kubernetesVersion = existsSync(versionFile) ? readFileSync(versionFile, 'utf8').trim() || undefined : undefined;
  if (kubernetesVersion && !/^v\d+\.\d+\.\d+\S*$/.test(kubernetesVersion)) throw new Error(`${KUBERNETES_VERSION_FILE} holds "${kubernetesVersion}", not a version such as v1.33.1`);
  let config: KubeletConfiguration = {};
  const configPath = flags.get('config');
  if (configPath) {
    const file = join(root, configPath);
    if (!existsSync(file)) throw new Error(`the kubelet unit names --config=${configPath}, which is not in the machine root`);
    // The machine's KubeletConfiguration as its Ignition config wrote it: taken as it is, as the kubelet's loader takes it.
    config = (parseYaml(readFileSync(file, 'utf8')) as KubeletConfiguration | null) ?? {};
  }
  const taints = config.registerWithTaints ?? parseTaints(flags.get('register-with-taints'));
  return {
    flags,
    config,
    bootstrapKubeconfigPath: flags.get('bootstrap-kubeconfig'),
    kubeconfigPath: flags.get('kubeconfig') ?? '/var/lib/kubelet/kubeconfig',
    nodeLabels: parseNodeLabels(flags.get('node-labels')),
    registerWithTaints: taints,
    cloudProvider: flags.get('cloud-provider') || undefined,
    staticPodPath: config.staticPodPath || flags.get('pod-manifest-path') || undefined,
    kubernetesVersion,
  };
}
