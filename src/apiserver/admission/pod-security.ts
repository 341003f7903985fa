// Pod Security admission, as kube-apiserver's PodSecurity plugin: a namespace's labels
// `pod-security.kubernetes.io/enforce|audit|warn` (with `-version`) choose a Pod Security Standard
// — privileged, baseline or restricted — and a pod created in it (or updated with new images or
// containers) that violates the enforce level is refused, 403, naming every check it fails in the
// upstream words (`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false
// (container "app" must set securityContext.allowPrivilegeEscalation=false), …`); one that
// violates the warn level is admitted with a warning, as is a workload (Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, CronJob) whose pod template would violate it. Without a warn label,
// warn follows enforce. Labels that cannot be read are refused on the namespace (422); should a
// namespace have them anyway, an unreadable enforce level enforces restricted (fails closed) and
// unreadable warn or audit levels are privileged (fail open). A namespace given a stricter enforce
// level is told which of its pods would now be refused (warnings). Every version label is read as the checks of
// this release (bosun serves one Kubernetes version's rules: `latest`). Audit annotations are not
// written (bosun's audit log has no annotations).
import type * as api from '../../api/index.js';
import { errors, type FieldProblem } from '../errors.js';
import { namespaces } from '../kinds/namespaces.js';
import { pods as podsKind } from '../kinds/pods.js';
import { storageKey, storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

const PREFIX = 'pod-security.kubernetes.io/';
const LEVELS = ['privileged', 'baseline', 'restricted'] as const;
type Level = (typeof LEVELS)[number];

/** A check's verdict: the reason, and the detail in parentheses (empty: none). */
interface Violation {
  reason: string;
  detail: string;
}

type PodSpec = api.PodSpec;
type AnyContainer = api.Container;

const quote = (items: string[]) => (items.length ? `"${items.join('", "')}"` : '');
const plural = (singular: string, pluralForm: string, n: number) => (n === 1 ? singular : pluralForm);
const containersWord = (names: string[]) => `${plural('container', 'containers', names.length)} ${quote(names)}`;
const sortedUnique = (items: Iterable<string>) => [...new Set(items)].sort();

/** Init containers, containers and ephemeral containers, in that order (as the upstream checks visit them). */
function containersOf(spec: PodSpec): AnyContainer[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...((spec.ephemeralContainers ?? []) as AnyContainer[])];
}

/** "pod and containers "a", "b"" — who set a forbidden value. */
function setters(pod: boolean, containers: string[]): string {
  return [...(pod ? ['pod'] : []), ...(containers.length ? [containersWord(containers)] : [])].join(' and ');
}

type Check = { id: string; level: 'baseline' | 'restricted'; overrides?: string; run: (meta: api.ObjectMeta, spec: PodSpec) => Violation | undefined };

const goodProfile = (type: string | undefined) => type === 'RuntimeDefault' || type === 'Localhost';

const CAPABILITIES_BASELINE = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem',
]);
const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const ALLOWED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];

/** Runs `test` on each container; the names of those it holds for. */
const containersWhere = (spec: PodSpec, test: (c: AnyContainer) => boolean) => containersOf(spec).filter(test).map((c) => c.name);

/** The Pod Security Standards' checks, as of Kubernetes 1.33, by ID (the order of their messages). */
const CHECKS: Check[] = [
  { id: 'appArmorProfile', level: 'baseline', run: (meta, spec) => {
    const values = new Set<string>();
    const podBad = spec.securityContext?.appArmorProfile !== undefined && !goodProfile(spec.securityContext.appArmorProfile.type);
    if (podBad) values.add(spec.securityContext!.appArmorProfile!.type);
    const bad = containersWhere(spec, (c) => c.securityContext?.appArmorProfile !== undefined && !goodProfile(c.securityContext.appArmorProfile.type));
    for (const c of containersOf(spec)) if (bad.includes(c.name)) values.add(c.securityContext!.appArmorProfile!.type);
    const annotations = Object.entries(meta.annotations ?? {})
      .filter(([k, v]) => k.startsWith('container.apparmor.security.beta.kubernetes.io/') && v !== 'runtime/default' && !v.startsWith('localhost/'))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`).sort();
    const list = [...sortedUnique(values), ...annotations];
    const who = [setters(podBad, bad), ...(annotations.length ? [plural('annotation', 'annotations', annotations.length)] : [])].filter(Boolean).join(' and ');
    return who ? { reason: plural('forbidden AppArmor profile', 'forbidden AppArmor profiles', list.length), detail: `${who} must not set AppArmor profile type to ${quote(list)}` } : undefined;
  } },
  { id: 'capabilities_baseline', level: 'baseline', run: (_m, spec) => {
    const added = new Set<string>();
    const bad = containersWhere(spec, (c) => {
      const extra = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !CAPABILITIES_BASELINE.has(cap));
      extra.forEach((cap) => added.add(cap));
      return extra.length > 0;
    });
    return bad.length ? { reason: 'non-default capabilities', detail: `${containersWord(bad)} must not include ${quote(sortedUnique(added))} in securityContext.capabilities.add` } : undefined;
  } },
  { id: 'hostNamespaces', level: 'baseline', run: (_m, spec) => {
    const used = [spec.hostNetwork && 'hostNetwork=true', spec.hostPID && 'hostPID=true', spec.hostIPC && 'hostIPC=true'].filter(Boolean) as string[];
    return used.length ? { reason: 'host namespaces', detail: used.join(', ') } : undefined;
  } },
  { id: 'hostPathVolumes', level: 'baseline', run: (_m, spec) => {
    const volumes = (spec.volumes ?? []).filter((v) => v.hostPath).map((v) => v.name);
    return volumes.length ? { reason: 'hostPath volumes', detail: `${plural('volume', 'volumes', volumes.length)} ${quote(volumes)}` } : undefined;
  } },
  { id: 'hostPorts', level: 'baseline', run: (_m, spec) => {
    const ports = new Set<string>();
    const bad = containersWhere(spec, (c) => {
      const used = (c.ports ?? []).filter((p) => p.hostPort).map((p) => String(p.hostPort));
      used.forEach((p) => ports.add(p));
      return used.length > 0;
    });
    return bad.length ? { reason: 'hostPort', detail: `${containersWord(bad)} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', ports.size)} ${sortedUnique(ports).join(', ')}` } : undefined;
  } },
  { id: 'privileged', level: 'baseline', run: (_m, spec) => {
    const bad = containersWhere(spec, (c) => c.securityContext?.privileged === true);
    return bad.length ? { reason: 'privileged', detail: `${containersWord(bad)} must not set securityContext.privileged=true` } : undefined;
  } },
  { id: 'procMount', level: 'baseline', run: (_m, spec) => {
    const types = new Set<string>();
    const bad = containersWhere(spec, (c) => {
      const mount = c.securityContext?.procMount;
      if (mount === undefined || mount === 'Default') return false;
      types.add(mount);
      return true;
    });
    return bad.length ? { reason: 'procMount', detail: `${containersWord(bad)} must not set securityContext.procMount to ${quote(sortedUnique(types))}` } : undefined;
  } },
  { id: 'seLinuxOptions', level: 'baseline', run: (_m, spec) => {
    const types = new Set<string>();
    let user = false;
    let role = false;
    const invalid = (o: { type?: string; user?: string; role?: string } | undefined) => {
      let bad = false;
      if (!SELINUX_TYPES.has(o?.type ?? '')) {
        types.add(o?.type ?? '');
        bad = true;
      }
      if (o?.user) user = bad = true;
      if (o?.role) role = bad = true;
      return bad;
    };
    const podBad = spec.securityContext?.seLinuxOptions !== undefined && invalid(spec.securityContext.seLinuxOptions);
    const bad = containersWhere(spec, (c) => c.securityContext?.seLinuxOptions !== undefined && invalid(c.securityContext.seLinuxOptions));
    if (!podBad && bad.length === 0) return undefined;
    const data = [...(types.size ? [`${plural('type', 'types', types.size)} ${quote(sortedUnique(types))}`] : []), ...(user ? ['user may not be set'] : []), ...(role ? ['role may not be set'] : [])];
    return { reason: 'seLinuxOptions', detail: `${setters(podBad, bad)} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  } },
  { id: 'seccompProfile_baseline', level: 'baseline', run: (_m, spec) => {
    const values = new Set<string>();
    const podType = spec.securityContext?.seccompProfile?.type;
    const podBad = podType !== undefined && !goodProfile(podType);
    if (podBad) values.add(podType);
    const bad = containersWhere(spec, (c) => {
      const type = c.securityContext?.seccompProfile?.type;
      if (type === undefined || goodProfile(type)) return false;
      values.add(type);
      return true;
    });
    return podBad || bad.length ? { reason: 'seccompProfile', detail: `${setters(podBad, bad)} must not set securityContext.seccompProfile.type to ${quote(sortedUnique(values))}` } : undefined;
  } },
  { id: 'sysctls', level: 'baseline', run: (_m, spec) => {
    const forbidden = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !SAFE_SYSCTLS.has(n));
    return forbidden.length ? { reason: 'forbidden sysctls', detail: forbidden.join(', ') } : undefined;
  } },
  { id: 'windowsHostProcess', level: 'baseline', run: (_m, spec) => {
    const podBad = spec.securityContext?.windowsOptions?.hostProcess === true;
    const bad = containersWhere(spec, (c) => c.securityContext?.windowsOptions?.hostProcess === true);
    return podBad || bad.length ? { reason: 'hostProcess', detail: `${setters(podBad, bad)} must not set securityContext.windowsOptions.hostProcess=true` } : undefined;
  } },
  { id: 'allowPrivilegeEscalation', level: 'restricted', run: (_m, spec) => {
    if (spec.os?.name === 'windows') return undefined;
    const bad = containersWhere(spec, (c) => c.securityContext?.allowPrivilegeEscalation !== false);
    return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${containersWord(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
  } },
  { id: 'capabilities_restricted', level: 'restricted', overrides: 'capabilities_baseline', run: (_m, spec) => {
    if (spec.os?.name === 'windows') return undefined;
    const added = new Set<string>();
    const missingDrop = containersWhere(spec, (c) => !(c.securityContext?.capabilities?.drop ?? []).includes('ALL'));
    const adding = containersWhere(spec, (c) => {
      const extra = (c.securityContext?.capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
      extra.forEach((cap) => added.add(cap));
      return extra.length > 0;
    });
    const details = [
      ...(missingDrop.length ? [`${containersWord(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`] : []),
      ...(adding.length ? [`${containersWord(adding)} must not include ${quote(sortedUnique(added))} in securityContext.capabilities.add`] : []),
    ];
    return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
  } },
  { id: 'restrictedVolumes', level: 'restricted', overrides: 'hostPathVolumes', run: (_m, spec) => {
    const types = new Set<string>();
    const bad = (spec.volumes ?? []).filter((v) => {
      const sources = Object.keys(v).filter((k) => k !== 'name');
      if (sources.some((k) => ALLOWED_VOLUMES.includes(k))) return false;
      types.add(sources[0] ?? 'unknown');
      return true;
    }).map((v) => v.name);
    return bad.length ? { reason: 'restricted volume types', detail: `${plural('volume', 'volumes', bad.length)} ${quote(bad)} ${plural('uses', 'use', bad.length)} ${plural('restricted volume type', 'restricted volume types', types.size)} ${quote(sortedUnique(types))}` } : undefined;
  } },
  { id: 'runAsNonRoot', level: 'restricted', run: (_m, spec) => {
    const podSetting = spec.securityContext?.runAsNonRoot;
    const explicit = containersWhere(spec, (c) => c.securityContext?.runAsNonRoot === false);
    const implicit = containersWhere(spec, (c) => c.securityContext?.runAsNonRoot === undefined && podSetting !== true);
    if (podSetting === false || explicit.length) return { reason: 'runAsNonRoot != true', detail: `${setters(podSetting === false, explicit)} must not set securityContext.runAsNonRoot=false` };
    return implicit.length ? { reason: 'runAsNonRoot != true', detail: `pod or ${containersWord(implicit)} must set securityContext.runAsNonRoot=true` } : undefined;
  } },
  { id: 'runAsUser', level: 'restricted', run: (_m, spec) => {
    const podBad = spec.securityContext?.runAsUser === 0;
    const bad = containersWhere(spec, (c) => c.securityContext?.runAsUser === 0);
    return podBad || bad.length ? { reason: 'runAsUser=0', detail: `${setters(podBad, bad)} must not set runAsUser=0` } : undefined;
  } },
  { id: 'seccompProfile_restricted', level: 'restricted', overrides: 'seccompProfile_baseline', run: (_m, spec) => {
    if (spec.os?.name === 'windows') return undefined;
    const values = new Set<string>();
    const podType = spec.securityContext?.seccompProfile?.type;
    const podBad = podType !== undefined && !goodProfile(podType);
    if (podBad) values.add(podType);
    const podSet = podType !== undefined && !podBad;
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containersOf(spec)) {
      const type = c.securityContext?.seccompProfile?.type;
      if (type !== undefined) {
        if (!goodProfile(type)) {
          explicit.push(c.name);
          values.add(type);
        }
      } else if (!podSet) implicit.push(c.name);
    }
    if (podBad || explicit.length) return { reason: 'seccompProfile', detail: `${setters(podBad, explicit)} must not set securityContext.seccompProfile.type to ${quote(sortedUnique(values))}` };
    return implicit.length ? { reason: 'seccompProfile', detail: `pod or ${containersWord(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` } : undefined;
  } },
];

/** The checks of a level: baseline's; restricted adds its own in place of those it overrides. */
function checksOf(level: Level): Check[] {
  if (level === 'privileged') return [];
  if (level === 'baseline') return CHECKS.filter((c) => c.level === 'baseline');
  const overridden = new Set(CHECKS.map((c) => c.overrides).filter(Boolean));
  return CHECKS.filter((c) => !overridden.has(c.id));
}

function failedChecks(level: Level, meta: api.ObjectMeta, spec: PodSpec): Violation[] {
  return checksOf(level).map((check) => check.run(meta, spec)).filter((v): v is Violation => v !== undefined);
}

/** What a pod violates of a level, as "reason (detail)" in the checks' order. */
export function podSecurityViolations(level: Level, meta: api.ObjectMeta, spec: PodSpec): string[] {
  return failedChecks(level, meta, spec).map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason));
}

/** A mode's level label read: the level, or undefined when it names none. */
const levelOf = (value: string): Level | undefined => ((LEVELS as readonly string[]).includes(value) ? (value as Level) : undefined);
/** A version label read: `latest` or `v1.<minor>`, or undefined when it is neither. */
const versionOf = (value: string): string | undefined => (value === 'latest' || /^v1\.(0|[1-9][0-9]*)$/.test(value) ? value : undefined);

/** The Pod Security labels of a namespace that cannot be read, as kube refuses them. */
export function namespaceLabelProblems(labels: Record<string, string> | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const mode of ['enforce', 'audit', 'warn']) {
    const level = labels?.[`${PREFIX}${mode}`];
    if (level !== undefined && !levelOf(level)) {
      problems.push({ type: 'FieldValueInvalid', field: `metadata.labels[${PREFIX}${mode}]`, message: `Invalid value: ${JSON.stringify(level)}: must be one of ${LEVELS.join(', ')}` });
    }
    const version = labels?.[`${PREFIX}${mode}-version`];
    if (version !== undefined && !versionOf(version)) {
      problems.push({ type: 'FieldValueInvalid', field: `metadata.labels[${PREFIX}${mode}-version]`, message: `Invalid value: ${JSON.stringify(version)}: must be "latest" or "v1.x"` });
    }
  }
  return problems;
}

/** How many of a namespace's pods a new enforce level is checked against (kube's default). */
const MAX_PODS_CHECKED = 3000;

/** A namespace's policy from its labels, as the plugin reads it. */
export function namespacePolicy(labels: Record<string, string> | undefined): { enforce: Level; enforceVersion: string; warn: Level; warnVersion: string } {
  const read = (mode: string, failOpen: boolean): Level | undefined => {
    const value = labels?.[`${PREFIX}${mode}`];
    if (value === undefined) return undefined;
    return levelOf(value) ?? (failOpen ? 'privileged' : 'restricted');
  };
  const version = (mode: string) => {
    const value = labels?.[`${PREFIX}${mode}-version`];
    return (value !== undefined && versionOf(value)) || 'latest';
  };
  const enforce = read('enforce', false) ?? 'privileged';
  let warn = read('warn', true);
  let warnVersion = version('warn');
  if (warn === undefined) {
    warn = LEVELS.indexOf(enforce) > 0 ? enforce : 'privileged';
    if (labels?.[`${PREFIX}warn-version`] === undefined) warnVersion = version('enforce');
  }
  return { enforce, enforceVersion: version('enforce'), warn, warnVersion };
}

/** The pod template of a workload kind, or undefined for kinds that have none. */
function templateOf(type: ResourceType, object: api.Unstructured): { metadata?: api.ObjectMeta; spec?: PodSpec } | undefined {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (type.group === 'apps' && ['deployments', 'replicasets', 'statefulsets', 'daemonsets'].includes(type.resource)) return spec?.template as never;
  if (type.group === 'batch' && type.resource === 'jobs') return spec?.template as never;
  if (type.group === 'batch' && type.resource === 'cronjobs') return ((spec?.jobTemplate as { spec?: { template?: unknown } } | undefined)?.spec?.template) as never;
  return undefined;
}

/** Whether a pod update is one the plugin looks at: new images, or containers added or removed. */
function significantPodUpdate(pod: api.Pod, old: api.Pod): boolean {
  const images = (p: api.Pod) => [(p.spec?.containers ?? []).map((c) => c.image), (p.spec?.initContainers ?? []).map((c) => c.image), (p.spec?.ephemeralContainers ?? []).map((c) => `${c.name}=${c.image}`)];
  return JSON.stringify(images(pod)) !== JSON.stringify(images(old));
}

export class PodSecurityAdmission implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  /**
   * Refuses a pod that violates its namespace's enforce level (403), and adds to `warnings` what a
   * pod or a workload's pod template would violate of its warn level.
   */
  validate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined, warnings: string[] | undefined): void {
    if (type.group === '' && type.resource === 'namespaces') return this.admitNamespace(object, previous, warnings);
    const isPod = type.group === '' && type.resource === 'pods';
    const template = isPod ? undefined : templateOf(type, object);
    if (!isPod && !template) return;
    const namespace = object.metadata.namespace;
    if (!namespace) return;
    const labels = (this.storage.get(storageKey(namespaces.type, undefined, namespace))?.object.metadata.labels ?? undefined) as Record<string, string> | undefined;
    if (!labels || !Object.keys(labels).some((k) => k.startsWith(PREFIX))) return;
    const policy = namespacePolicy(labels);
    if (isPod) {
      if (previous && !significantPodUpdate(object as api.Pod, previous as api.Pod)) return;
      const spec = (object.spec ?? {}) as PodSpec;
      const violations = podSecurityViolations(policy.enforce, object.metadata, spec);
      if (violations.length > 0) {
        throw errors.forbiddenObject(type.resource, type.group, object.metadata.name, `violates PodSecurity "${policy.enforce}:${policy.enforceVersion}": ${violations.join(', ')}`);
      }
      this.warn(policy, object.metadata, spec, warnings);
      return;
    }
    this.warn(policy, template!.metadata ?? ({} as api.ObjectMeta), template!.spec ?? ({} as PodSpec), warnings);
  }

  /**
   * A namespace's labels must be readable (a create, or an update that brings new problems, is
   * refused 422); a stricter enforce level is checked against the pods already there, and what
   * they violate comes back as warnings, one per distinct set of failed checks, naming a pod.
   */
  private admitNamespace(object: api.Unstructured, previous: api.Unstructured | undefined, warnings: string[] | undefined): void {
    const labels = object.metadata.labels as Record<string, string> | undefined;
    const problems = namespaceLabelProblems(labels);
    const before = previous ? namespaceLabelProblems(previous.metadata.labels as Record<string, string> | undefined) : [];
    if (problems.length > 0 && (before.length === 0 || JSON.stringify(problems) !== JSON.stringify(before))) {
      throw errors.invalid('Namespace', '', object.metadata.name, problems);
    }
    if (!previous) return;
    const next = namespacePolicy(labels);
    const old = namespacePolicy(previous.metadata.labels as Record<string, string> | undefined);
    if (next.enforce === 'privileged' || (next.enforce === old.enforce && next.enforceVersion === old.enforceVersion)) return;
    if (next.enforceVersion === old.enforceVersion && LEVELS.indexOf(next.enforce) <= LEVELS.indexOf(old.enforce)) return;
    const pods = this.storage.list(`${storagePrefix(podsKind.type)}${object.metadata.name}/`).items.map((i) => i.object as api.Pod);
    const checked = pods.slice(0, MAX_PODS_CHECKED);
    const byReasons = new Map<string, { first: string; count: number }>();
    for (const pod of checked) {
      const failed = failedChecks(next.enforce, pod.metadata, (pod.spec ?? {}) as PodSpec);
      if (failed.length === 0) continue;
      const reasons = failed.map((v) => v.reason).join(', ');
      const seen = byReasons.get(reasons);
      byReasons.set(reasons, { first: seen && seen.first < pod.metadata.name ? seen.first : pod.metadata.name, count: (seen?.count ?? 0) + 1 });
    }
    if (checked.length < pods.length) warnings?.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
    if (byReasons.size === 0) return;
    warnings?.push(`existing pods in namespace ${JSON.stringify(object.metadata.name)} violate the new PodSecurity enforce level "${next.enforce}:${next.enforceVersion}"`);
    const named = [...byReasons].map(([reasons, { first, count }]) => `${first}${count === 2 ? ' (and 1 other pod)' : count > 2 ? ` (and ${count - 1} other pods)` : ''}: ${reasons}`);
    warnings?.push(...named.sort());
  }

  private warn(policy: ReturnType<typeof namespacePolicy>, meta: api.ObjectMeta, spec: PodSpec, warnings: string[] | undefined): void {
    const violations = podSecurityViolations(policy.warn, meta, spec);
    if (violations.length > 0) warnings?.push(`would violate PodSecurity "${policy.warn}:${policy.warnVersion}": ${violations.join(', ')}`);
  }
}
