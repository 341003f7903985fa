// What Cluster API's kubeadm admission webhooks do that OpenAPI cannot say, as pure functions over
// the objects: defaulting (controlplane/kubeadm/webhooks/admission: replicas 1, a `v` before the
// version, rollout.strategy RollingUpdate with maxSurge 1) and validation (even replicas with
// stacked etcd, maxSurge 0 with fewer than 3 replicas, files and users with two sources, what
// Ignition cannot do). Errors are field paths as Kubernetes prints them
// (`spec.replicas: Forbidden: cannot be an even number when etcd is stacked`), so that an
// admission webhook can return them as they are; until there is one, the controllers refuse an
// invalid object with a condition carrying them.
//
// bosun's departures, each because its machines boot from Ignition: `format` unset means
// `ignition` (the defaulters write it), and `cloud-config` is refused.
import type * as api from '../../api/index.js';
import { FORMAT } from './api.js';

/** KCP's default remediation: a Machine healthy this long after a remediation starts a new count (Cluster API's DefaultMinHealthyPeriodSeconds). */
export const DEFAULT_MIN_HEALTHY_PERIOD_SECONDS = 3600;

type Spec = api.KubeadmConfigSpec;

/** A value as field.Invalid prints it: strings quoted, numbers bare, objects as JSON. */
const render = (value: unknown): string => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value ?? ''));
const required = (path: string, detail: string) => `${path}: Required value: ${detail}`;
const forbidden = (path: string, detail: string) => `${path}: Forbidden: ${detail}`;
const invalid = (path: string, value: unknown, detail: string) => `${path}: Invalid value: ${render(value)}: ${detail}`;
const unsupported = (path: string, value: unknown, supported: string[]) => `${path}: Unsupported value: ${render(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`;

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const IMAGE_TAG = /^[\w][\w.-]{0,127}$/;

/** The format a spec asks for: unset is Ignition on bosun. */
export const bootstrapFormat = (spec: Spec | undefined): string => spec?.format ?? FORMAT.ignition;

/** A KubeadmConfigSpec with bosun's defaults: format ignition. Does not change its argument. */
function defaultSpec(spec: Spec | undefined): Spec {
  return { ...(spec ?? {}), format: spec?.format ?? FORMAT.ignition };
}

/** The KubeadmConfig as the defaulting webhook would store it. */
export function defaultKubeadmConfig(obj: api.KubeadmConfig): api.KubeadmConfig {
  return { ...obj, spec: defaultSpec(obj.spec) };
}

/**
 * The KubeadmConfigTemplate as the defaulting webhook would store it: one without a spec stays
 * without (it is valid, and its KubeadmConfigs get their defaults when created).
 */
export function defaultKubeadmConfigTemplate(obj: api.KubeadmConfigTemplate): api.KubeadmConfigTemplate {
  const template = obj.spec?.template;
  if (!template?.spec) return obj;
  return { ...obj, spec: { ...obj.spec, template: { ...template, spec: defaultSpec(template.spec) } } };
}

/** The KubeadmControlPlane as Cluster API's defaulting webhook (plus bosun's format) would store it. */
export function defaultKubeadmControlPlane(obj: api.KubeadmControlPlane): api.KubeadmControlPlane {
  const spec = obj.spec;
  const version = spec.version && !spec.version.startsWith('v') ? `v${spec.version}` : spec.version;
  const rollingUpdate = spec.rollout?.strategy?.rollingUpdate;
  return {
    ...obj,
    spec: {
      ...spec,
      replicas: spec.replicas ?? 1,
      version,
      kubeadmConfigSpec: defaultSpec(spec.kubeadmConfigSpec),
      rollout: {
        ...(spec.rollout ?? {}),
        strategy: { ...(spec.rollout?.strategy ?? {}), type: 'RollingUpdate', rollingUpdate: { ...(rollingUpdate ?? {}), maxSurge: rollingUpdate?.maxSurge ?? 1 } },
      },
      remediation: { ...(spec.remediation ?? {}), minHealthyPeriodSeconds: spec.remediation?.minHealthyPeriodSeconds ?? DEFAULT_MIN_HEALTHY_PERIOD_SECONDS },
    },
  };
}

/** The bootstrap webhook's rules for a KubeadmConfigSpec at `path` (`spec`, `spec.kubeadmConfigSpec`, …). */
export function validateKubeadmConfigSpec(spec: Spec | undefined, path: string, isKCP = false): string[] {
  if (!spec) return [];
  const errs: string[] = [];
  const seen = new Set<string>();
  (spec.files ?? []).forEach((file, i) => {
    const at = `${path}.files[${i}]`;
    if (file.content && file.contentFrom) errs.push(invalid(at, file, 'only one of content or contentFrom may be specified for a single file'));
    if (file.contentFrom) {
      if (!file.contentFrom.secret?.name) errs.push(required(`${at}.contentFrom.secret.name`, 'secret file source must specify non-empty secret name'));
      if (!file.contentFrom.secret?.key) errs.push(required(`${at}.contentFrom.secret.key`, 'secret file source must specify non-empty secret key'));
    }
    if (seen.has(file.path)) errs.push(invalid(`${at}.path`, file, 'path property must be unique among all files'));
    seen.add(file.path);
  });
  (spec.users ?? []).forEach((user, i) => {
    const at = `${path}.users[${i}]`;
    if (user.passwd && user.passwdFrom) errs.push(invalid(at, user, 'only one of passwd or passwdFrom may be specified for a single user'));
    if (user.passwdFrom) {
      if (!user.passwdFrom.secret?.name) errs.push(required(`${at}.passwdFrom.secret.name`, 'secret file source must specify non-empty secret name'));
      if (!user.passwdFrom.secret?.key) errs.push(required(`${at}.passwdFrom.secret.key`, 'secret file source must specify non-empty secret key'));
    }
  });

  const format = bootstrapFormat(spec);
  if (format === FORMAT.cloudConfig) {
    errs.push(unsupported(`${path}.format`, format, [FORMAT.ignition]) + ` (bosun's machines boot from Ignition; leave format unset or set it to "ignition")`);
  } else {
    const withIgnition = `not supported when spec.format is set to: "${FORMAT.ignition}"`;
    (spec.users ?? []).forEach((user, i) => {
      if (user.inactive) errs.push(forbidden(`${path}.users[${i}].inactive`, withIgnition));
    });
    (spec.files ?? []).forEach((file, i) => {
      if (file.encoding === 'gzip' || file.encoding === 'gzip+base64') errs.push(forbidden(`${path}.files[${i}].encoding`, withIgnition));
    });
    if (spec.bootCommands) errs.push(forbidden(`${path}.bootCommands`, withIgnition));
  }
  if (spec.ignition && format !== FORMAT.ignition) errs.push(invalid(`${path}.format`, format, `must be set to "${FORMAT.ignition}" if spec.ignition is set`));

  const user = spec.joinConfiguration?.discovery?.file?.kubeConfig?.user as { authProvider?: unknown; exec?: unknown } | undefined;
  if (user?.authProvider && user.exec) errs.push(invalid(`${path}.joinConfiguration.discovery.file.kubeconfig.user`, user, 'only one of authProvider or exec must be defined'));

  if (isKCP) {
    const init = spec.initConfiguration?.timeouts?.controlPlaneComponentHealthCheckSeconds;
    const join = spec.joinConfiguration?.timeouts?.controlPlaneComponentHealthCheckSeconds;
    if (init !== join) {
      const [tInit, tJoin] = [init ?? 'unset', join ?? 'unset'].map(String);
      const detail = `controlPlaneComponentHealthCheckSeconds must be set to the same value both in initConfiguration.timeouts (${tInit}) and in joinConfiguration.timeouts (${tJoin})`;
      errs.push(invalid(`${path}.initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds`, tInit, detail));
      errs.push(invalid(`${path}.joinConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds`, tJoin, detail));
    }
  }
  return errs;
}

export function validateKubeadmConfig(obj: api.KubeadmConfig): string[] {
  return validateKubeadmConfigSpec(obj.spec, 'spec');
}

export function validateKubeadmConfigTemplate(obj: api.KubeadmConfigTemplate): string[] {
  return validateKubeadmConfigSpec(obj.spec?.template?.spec, 'spec.template.spec');
}

type ClusterConfiguration = NonNullable<Spec['clusterConfiguration']>;

function validateClusterConfiguration(old: ClusterConfiguration | undefined, config: ClusterConfiguration, path: string): string[] {
  const errs: string[] = [];
  const dnsTag = config.dns?.imageTag;
  if (dnsTag !== undefined && !IMAGE_TAG.test(dnsTag)) errs.push(forbidden(`${path}.dns.imageTag`, `tag ${dnsTag} is invalid`));
  const etcdTag = config.etcd?.local?.imageTag;
  if (etcdTag !== undefined && !IMAGE_TAG.test(etcdTag)) errs.push(forbidden(`${path}.etcd.local.imageTag`, `tag ${etcdTag} is invalid`));
  if (config.etcd?.local && config.etcd.external) errs.push(forbidden(`${path}.etcd.local`, 'cannot have both external and local etcd'));
  if (old && Boolean(old.etcd?.external) !== Boolean(config.etcd?.external)) errs.push(forbidden(`${path}.etcd.external`, 'cannot change between external and local etcd'));
  const certDays = config.certificateValidityPeriodDays;
  const caDays = config.caCertificateValidityPeriodDays;
  if (certDays !== undefined && caDays !== undefined && certDays > caDays) {
    errs.push(invalid(`${path}.certificateValidityPeriodDays`, certDays, `must be less than or equal to caCertificateValidityPeriodDays (${caDays})`));
  }
  return errs;
}

/**
 * The control-plane webhook's rules (create, and update when `old` is given). The object is read
 * as stored, so run defaultKubeadmControlPlane first as the API server would.
 */
export function validateKubeadmControlPlane(obj: api.KubeadmControlPlane, old?: api.KubeadmControlPlane): string[] {
  const spec = obj.spec;
  const errs: string[] = [];
  if (spec.replicas === undefined) errs.push(required('spec.replicas', 'is required'));
  else if (spec.replicas <= 0) errs.push(forbidden('spec.replicas', 'cannot be less than or equal to 0'));
  const externalEtcd = Boolean(spec.kubeadmConfigSpec?.clusterConfiguration?.etcd?.external);
  if (!externalEtcd && spec.replicas !== undefined && spec.replicas % 2 === 0) errs.push(forbidden('spec.replicas', 'cannot be an even number when etcd is stacked'));

  const ref = spec.machineTemplate?.spec?.infrastructureRef;
  for (const field of ['apiGroup', 'kind', 'name'] as const) {
    if (!ref?.[field]) errs.push(invalid(`spec.machineTemplate.infrastructure.${field}`, ref?.[field] ?? '', 'cannot be empty'));
  }

  const version = spec.version ?? '';
  if (!version.startsWith('v')) errs.push(invalid('spec.version', version, 'must start with v'));
  if (!SEMVER.test(version.replace(/^v/, ''))) errs.push(invalid('spec.version', version, 'must be a valid semantic version'));

  const strategy = spec.rollout?.strategy;
  if (strategy && Object.keys(strategy).length > 0) {
    if (strategy.type !== 'RollingUpdate') errs.push(required('spec.rollout.strategy.type', 'only RollingUpdate is supported'));
    const maxSurge = strategy.rollingUpdate?.maxSurge;
    if (maxSurge !== undefined) {
      // intstr's IntValue: a string that is not a number counts as 0, as upstream reads it.
      const surge = typeof maxSurge === 'number' ? maxSurge : Number.parseInt(maxSurge, 10) || 0;
      if (surge === 0 && spec.replicas !== undefined && spec.replicas < 3) errs.push(required('spec.rollout.strategy.rollingUpdate', 'when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3'));
      if (surge !== 0 && surge !== 1) errs.push(required('spec.rollout.strategy.rollingUpdate.maxSurge', 'value must be 1 or 0'));
    }
  }
  const before = spec.rollout?.before?.certificatesExpiryDays;
  const certDays = spec.kubeadmConfigSpec?.clusterConfiguration?.certificateValidityPeriodDays;
  if (before !== undefined && certDays !== undefined && before >= certDays) {
    errs.push(invalid('spec.rollout.before.certificatesExpiryDays', before, `must be less than certificateValidityPeriodDays (${certDays})`));
  }

  // An unset clusterConfiguration is an empty one (Go's zero value), on either side of an update.
  const oldConfig = old ? (old.spec.kubeadmConfigSpec?.clusterConfiguration ?? {}) : undefined;
  errs.push(...validateClusterConfiguration(oldConfig, spec.kubeadmConfigSpec?.clusterConfiguration ?? {}, 'spec.kubeadmConfigSpec.clusterConfiguration'));
  errs.push(...validateKubeadmConfigSpec(spec.kubeadmConfigSpec, 'spec.kubeadmConfigSpec', true));
  return errs;
}
