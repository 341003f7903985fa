// The render step as a pure function: which MachineConfigs a pool selects, how they merge into one
// spec, the rendered MachineConfig `rendered-<pool>-<hash>` that results, and whether the pool may
// move to it from its current rendered config. No I/O: the render controller reads the objects,
// calls renderPool and writes what it returns.
//
// Merge rules (OpenShift's): the selected configs are sorted by name — those labelled for the
// worker role first, so that a custom pool's own configs override the worker configs it inherits
// (for the worker and master pools this is plain name order) — and folded left to right, so for
// the same file path, unit or user a later config wins (Ignition merge semantics); a file whose
// `overwrite` is unset gets overwrite=true; kernelArguments are concatenated in that order;
// extensions are the union in order of first appearance; fips is true if any config sets it;
// kernelType is the last value other than "" and "default" (else "default"), and the
// kernel-devel extension needs the default kernel; osImageURL and baseOSExtensionsContainerImage
// are the last non-empty ones, else the ControllerConfig's. The rendered Ignition is written at
// spec 3.5.0 whatever the inputs' versions (every 3.x config is valid 3.5), so names do not
// depend on them.
import { BosunError } from '../../common/errors.js';
import { createHash } from 'node:crypto';
import { fromLabelSelectorObject, matchesLabels, SelectorError } from '../../common/label-selectors.js';
import { mergeAll } from '../../ignition/merge.js';
import { parseConfig } from '../../ignition/parse.js';
import { isEmptyValue } from '../../ignition/schema.js';
import { formatSpec3, LATEST_SPEC3_MINOR } from '../../ignition/version.js';
import {
  GENERATED_BY_VERSION_ANNOTATION, MCO_API_VERSION, RELEASE_IMAGE_VERSION_ANNOTATION, ROLE_LABEL,
  ignitionConfigOf, metaSelector, ownerReferenceTo, rawIgnitionConfig, type MachineConfig, type MachineConfigPool, type MachineConfigSpec, type ObjectReference,
} from './types.js';
import { unreconcilableChanges, validateMachineConfig, type SpecProblem } from './validation.js';

export const RENDERED_IGNITION_VERSION = formatSpec3(LATEST_SPEC3_MINOR);
/** Kubernetes' request size limit; a rendered config must fit in one object. */
export const MAX_RENDERED_BYTES = 1.5 * 1024 * 1024;

export type RenderErrorReason = 'InvalidSelector' | 'NoMachineConfigs' | 'InvalidMachineConfig' | 'Unreconcilable' | 'TooLarge';

/** Why a pool cannot be rendered, naming the MachineConfigs at fault; the pool keeps its config. */
/** The RenderDegraded message for a pool's render failure, as OpenShift words it. */
export function renderFailureMessage(pool: string, error: string): string {
  return `Failed to render configuration for pool ${pool}: ${error}`;
}

export class RenderError extends BosunError {
  constructor(override readonly reason: RenderErrorReason, message: string, readonly machineConfigs: string[] = []) {
    super(reason, message);
  }
}

export interface RenderOptions {
  /** Version of the controller, written to generated-by-controller-version. */
  controllerVersion: string;
  /** The release's version, written to release-image-version (omitted when empty). */
  releaseVersion?: string;
  /** Default OS image (ControllerConfig spec.osImageURL). */
  osImageURL?: string;
  /** ControllerConfig spec.baseOSExtensionsContainerImage. */
  baseOSExtensionsContainerImage?: string;
  /** The spec of the pool's current rendered config; changes from it must be reconcilable. */
  currentSpec?: MachineConfigSpec;
  /** Source names of the current rendered config (pool.spec.configuration.source), to blame new configs first. */
  currentSources?: string[];
}

export interface RenderResult {
  rendered: MachineConfig & { spec: MachineConfigSpec };
  /** The selected MachineConfigs in merge order, as object references. */
  source: ObjectReference[];
}

/** The MachineConfigs the pool's machineConfigSelector selects, in merge order (worker-role
 *  configs first, each group by name). An absent or empty selector selects nothing, as in OpenShift. */
export function selectMachineConfigs(pool: MachineConfigPool, all: MachineConfig[]): MachineConfig[] {
  const raw = pool.spec.machineConfigSelector;
  if (!raw || (Object.keys(raw.matchLabels ?? {}).length === 0 && (raw.matchExpressions ?? []).length === 0)) return [];
  let selector;
  try { selector = fromLabelSelectorObject(metaSelector(raw)); } catch (e) {
    if (e instanceof SelectorError) throw new RenderError('InvalidSelector', `pool ${pool.metadata.name}: invalid spec.machineConfigSelector: ${e.message}`);
    throw e;
  }
  return all
    .filter((mc) => !mc.metadata.deletionTimestamp && !isRendered(mc) && matchesLabels(selector, mc.metadata.labels))
    .sort((a, b) => Number(!isWorkerConfig(a)) - Number(!isWorkerConfig(b)) || compareNames(a.metadata.name ?? '', b.metadata.name ?? ''));
}

function isWorkerConfig(mc: MachineConfig): boolean {
  return mc.metadata.labels?.[ROLE_LABEL] === 'worker';
}

/** True for the controller's own output (never an input to another render). */
export function isRendered(mc: MachineConfig): boolean {
  return (mc.metadata.name ?? '').startsWith('rendered-') && (mc.metadata.ownerReferences ?? []).some((o) => o.kind === 'MachineConfigPool');
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Folds the configs (already in merge order) into one spec; see the header for the rules. */
export function mergeMachineConfigs(configs: MachineConfig[], defaults: Pick<RenderOptions, 'osImageURL' | 'baseOSExtensionsContainerImage'> = {}): MachineConfigSpec {
  const ignition = mergeAll([
    { ignition: { version: RENDERED_IGNITION_VERSION } },
    // As Ignition reads each config (the MCO parses into typed structs): keys it ignores vanish.
    ...configs.map((mc) => (mc.spec?.config ? parseConfig(mc.spec.config).config : { ignition: { version: RENDERED_IGNITION_VERSION } })),
  ]);
  ignition.ignition.version = RENDERED_IGNITION_VERSION;
  for (const f of ignition.storage?.files ?? []) if (f.overwrite === undefined || f.overwrite === null) f.overwrite = true;

  const kernelArguments: string[] = [];
  const extensions: string[] = [];
  let fips = false;
  let kernelType = 'default';
  let osImageURL = defaults.osImageURL ?? '';
  let extensionsImage = defaults.baseOSExtensionsContainerImage ?? '';
  for (const { spec = {} } of configs) {
    kernelArguments.push(...(spec.kernelArguments ?? []));
    for (const e of spec.extensions ?? []) if (!extensions.includes(e)) extensions.push(e);
    fips ||= spec.fips === true;
    if (spec.kernelType && spec.kernelType !== 'default') kernelType = spec.kernelType;
    if (spec.osImageURL) osImageURL = spec.osImageURL;
    if (spec.baseOSExtensionsContainerImage) extensionsImage = spec.baseOSExtensionsContainerImage;
  }
  return {
    config: rawIgnitionConfig(ignition),
    kernelArguments,
    extensions,
    fips,
    kernelType,
    osImageURL,
    ...(extensionsImage ? { baseOSExtensionsContainerImage: extensionsImage } : {}),
  };
}

/** JSON with object keys sorted at every level: the same data always gives the same text. */
export function canonicalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, (v as Record<string, unknown>)[k]]));
  }, indent);
}

/** `rendered-<pool>-<md5 of the canonical JSON of the merged spec>` (32 hex digits, as OpenShift). */
export function renderedName(poolName: string, spec: MachineConfigSpec): string {
  return `rendered-${poolName}-${createHash('md5').update(canonicalJson(spec)).digest('hex')}`;
}

/** Renders a pool, or throws RenderError naming what is wrong. */
export function renderPool(pool: MachineConfigPool, all: MachineConfig[], options: RenderOptions): RenderResult {
  const poolName = pool.metadata.name ?? '';
  const selected = selectMachineConfigs(pool, all);
  if (selected.length === 0) {
    const raw = pool.spec.machineConfigSelector;
    const empty = !raw || (Object.keys(raw.matchLabels ?? {}).length === 0 && (raw.matchExpressions ?? []).length === 0);
    throw new RenderError('NoMachineConfigs', `pool ${poolName}: ${empty ? 'spec.machineConfigSelector is empty, which selects nothing' : 'no MachineConfigs match spec.machineConfigSelector'}`);
  }

  const invalid = selected.map((mc) => ({ mc, problems: validateMachineConfig(mc) })).filter((x) => x.problems.length > 0);
  if (invalid.length > 0) {
    throw new RenderError('InvalidMachineConfig', invalid.map(({ mc, problems }) => `MachineConfig ${mc.metadata.name} is invalid: ${formatProblems(problems)}`).join('; '), invalid.map(({ mc }) => mc.metadata.name ?? ''));
  }

  const spec = mergeMachineConfigs(selected, options);
  if (spec.kernelType !== 'default' && spec.extensions?.includes('kernel-devel')) {
    const blamed = selected.filter((mc) => mc.spec?.extensions?.includes('kernel-devel') || (mc.spec?.kernelType && mc.spec.kernelType !== 'default')).map((mc) => mc.metadata.name ?? '');
    throw new RenderError('InvalidMachineConfig', `MachineConfig ${blamed.join(', ')}: the kernel-devel extension needs the default kernel, not kernelType ${spec.kernelType}`, blamed);
  }
  const size = Buffer.byteLength(JSON.stringify(spec));
  if (size > MAX_RENDERED_BYTES) {
    throw new RenderError('TooLarge', `pool ${poolName}: the rendered config would be ${size} bytes, more than the ${MAX_RENDERED_BYTES} an object may hold`, largestConfigs(selected));
  }

  if (options.currentSpec) {
    const problems = unreconcilableChanges(options.currentSpec, spec);
    if (problems.length > 0) {
      const blamed = blameConfigs(problems, selected, new Set(options.currentSources ?? []));
      const who = blamed.length > 0 ? `MachineConfig ${blamed.join(', ')}` : 'removing a MachineConfig';
      throw new RenderError('Unreconcilable', `${who}: change cannot be applied to running nodes of pool ${poolName}: ${formatProblems(problems)}`, blamed);
    }
  }

  const annotations: Record<string, string> = { [GENERATED_BY_VERSION_ANNOTATION]: options.controllerVersion };
  if (options.releaseVersion) annotations[RELEASE_IMAGE_VERSION_ANNOTATION] = options.releaseVersion;
  const rendered: RenderResult['rendered'] = {
    apiVersion: MCO_API_VERSION,
    kind: 'MachineConfig',
    metadata: { name: renderedName(poolName, spec), annotations, ownerReferences: [ownerReferenceTo(pool, 'MachineConfigPool')] },
    spec,
  };
  const source = selected.map((mc) => ({ apiVersion: MCO_API_VERSION, kind: 'MachineConfig', name: mc.metadata.name }));
  return { rendered, source };
}

function formatProblems(problems: SpecProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}

function largestConfigs(configs: MachineConfig[]): string[] {
  return [...configs].sort((a, b) => JSON.stringify(b.spec).length - JSON.stringify(a.spec).length).slice(0, 1).map((mc) => mc.metadata.name ?? '');
}

/** The configs that set a field an unreconcilable problem names; configs new to the pool first,
 *  and only those when there are any. Empty when the change comes from a config's removal. */
function blameConfigs(problems: SpecProblem[], selected: MachineConfig[], currentSources: Set<string>): string[] {
  const setsField = (mc: MachineConfig, field: string) => {
    if (field === 'spec.fips') return mc.spec?.fips === true;
    if (field === 'spec.config.ignition') {
      const { version: _v, ...rest } = ignitionConfigOf(mc.spec).ignition ?? { version: '' };
      return !isEmptyValue(rest);
    }
    const path = field.replace(/^spec\.config\.?/, '').replace(/\[\d+\].*$/, '').split('.').filter(Boolean);
    let v: unknown = mc.spec?.config;
    for (const p of path) v = (v as Record<string, unknown> | undefined)?.[p];
    return !isEmptyValue(v);
  };
  const contributors = selected.filter((mc) => problems.some((p) => setsField(mc, p.field))).map((mc) => mc.metadata.name ?? '');
  const fresh = contributors.filter((n) => !currentSources.has(n));
  return fresh.length > 0 ? fresh : contributors;
}
