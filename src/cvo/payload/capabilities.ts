// Cluster capabilities as OpenShift defines them (config.openshift.io/v1 ClusterVersion
// spec.capabilities): the known capability names, the baseline sets by release, and the
// enabled set that follows from a ClusterVersion's spec.
export const knownCapabilities: readonly string[] = [
  'baremetal', 'marketplace', 'openshift-samples', 'Console', 'Insights', 'Storage', 'CSISnapshot',
  'NodeTuning', 'MachineAPI', 'Build', 'DeploymentConfig', 'ImageRegistry', 'OperatorLifecycleManager',
  'CloudCredential', 'Ingress', 'CloudControllerManager', 'OperatorLifecycleManagerV1',
];

const v411 = ['baremetal', 'marketplace', 'openshift-samples'];
const v412 = [...v411, 'Console', 'Insights', 'Storage', 'CSISnapshot'];
const v413 = [...v412, 'NodeTuning'];
const v414 = [...v413, 'MachineAPI', 'Build', 'DeploymentConfig', 'ImageRegistry'];
const v415 = [...v414, 'OperatorLifecycleManager', 'CloudCredential'];
const v416 = [...v415, 'CloudControllerManager', 'Ingress'];
const v418 = [...v416, 'OperatorLifecycleManagerV1'];

/** OpenShift's ClusterVersionCapabilitySet values and what each enables. */
export const baselineCapabilitySets: Readonly<Record<string, readonly string[]>> = {
  None: [],
  'v4.11': v411,
  'v4.12': v412,
  'v4.13': v413,
  'v4.14': v414,
  'v4.15': v415,
  'v4.16': v416,
  'v4.17': v416,
  'v4.18': v418,
  vCurrent: knownCapabilities,
};

export interface CapabilitiesSpec {
  baselineCapabilitySet?: string;
  additionalEnabledCapabilities?: string[];
}

/**
 * The capabilities enabled by a ClusterVersion spec.capabilities: the baseline set (vCurrent
 * when unset, as OpenShift defaults it) plus the additional ones. An unknown baseline set name
 * is an error the caller reports (the API schema's enum rejects it before that on a cluster).
 */
export function enabledCapabilities(spec: CapabilitiesSpec | undefined): Set<string> {
  const baselineName = spec?.baselineCapabilitySet ?? 'vCurrent';
  const baseline = baselineCapabilitySets[baselineName];
  if (!baseline) throw new Error(`unknown baselineCapabilitySet ${JSON.stringify(baselineName)}; known: ${Object.keys(baselineCapabilitySets).join(', ')}`);
  return new Set([...baseline, ...(spec?.additionalEnabledCapabilities ?? [])]);
}
