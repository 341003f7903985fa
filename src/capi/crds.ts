// The CustomResourceDefinitions of Cluster API (cluster.x-k8s.io/v1beta2: Cluster, Machine,
// MachineSet, MachineDeployment, MachineHealthCheck) and of the local infrastructure provider
// (infrastructure.cluster.x-k8s.io/v1beta2: LocalCluster, LocalMachine, LocalMachineTemplate),
// built from one set of schema pieces so that a Machine's spec is the same wherever it appears
// (a Machine, a MachineSet's or a MachineDeployment's template). Field names, short names,
// categories, printer columns and subresources are Cluster API's (api/core/v1beta2, whose
// storage version v1beta2 is); the schemas keep the fields bosun uses and Cluster API's
// validations of them. `scripts/generate-capi-crds.ts` writes them into release-payload/manifests
// (0000_30_cluster-api_01_*.crd.yaml) and test/capi/crds.test.ts fails when the files drift.
import { stringify } from 'yaml';
import type * as api from '../api/index.js';
import { GROUP, INFRA_GROUP } from './api.js';
import { BOOTSTRAP_GROUP, CONTROL_PLANE_GROUP } from './kubeadm/api.js';
import { payloadWebhookConfigurations } from './webhooks.js';

/** A piece of OpenAPI v3 schema as the CRD's YAML holds it (keys such as x-kubernetes-list-type). */
type Schema = { [keyword: string]: unknown };

/**
 * A CRD as these definitions build it. Not client-node's model: its schema keys are camelCased
 * (xKubernetesListType) where the manifest's are the wire names.
 */
export type CrdManifest = api.KubeObject & {
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[]; categories: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Schema[];
  };
};

const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
const int32 = (extra: Schema = {}): Schema => ({ type: 'integer', format: 'int32', ...extra });
const int64 = (extra: Schema = {}): Schema => ({ type: 'integer', format: 'int64', ...extra });
const bool = (): Schema => ({ type: 'boolean' });
const time = (): Schema => str({ format: 'date-time' });
const obj = (properties: Record<string, Schema>, required?: string[], extra: Schema = {}): Schema => ({ type: 'object', properties, ...(required ? { required } : {}), ...extra });
const list = (items: Schema, extra: Schema = { 'x-kubernetes-list-type': 'atomic' }): Schema => ({ type: 'array', items, ...extra });
const stringMap = (): Schema => ({ type: 'object', additionalProperties: { type: 'string' } });
const intOrString = (): Schema => ({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
const name = (max = 253): Schema => str({ minLength: 1, maxLength: max });

/** metav1.Condition. */
const conditions = (): Schema =>
  list(
    obj({
      type: str({ maxLength: 316, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$' }),
      status: str({ enum: ['True', 'False', 'Unknown'] }),
      observedGeneration: int64({ minimum: 0 }),
      lastTransitionTime: time(),
      reason: str({ maxLength: 1024 }),
      message: str({ maxLength: 32768 }),
    }, ['type', 'status', 'lastTransitionTime', 'reason', 'message']),
    { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], maxItems: 32 },
  );

/** ContractVersionedObjectReference: the version comes from the CRD's contract label. */
const contractRef = (): Schema => obj({
  apiGroup: str({ minLength: 1, maxLength: 253 }),
  kind: str({ minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' }),
  name: name(),
}, ['apiGroup', 'kind', 'name']);

const labelSelector = (): Schema => obj({
  matchLabels: stringMap(),
  matchExpressions: list(obj({ key: str(), operator: str(), values: list(str()) }, ['key', 'operator'])),
}, undefined, { 'x-kubernetes-map-type': 'atomic' });

const templateMeta = (): Schema => obj({ labels: stringMap(), annotations: stringMap() });

const machineAddresses = (): Schema => list(obj({
  type: str({ enum: ['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS'] }),
  address: str({ minLength: 1, maxLength: 256 }),
}, ['type', 'address']));

/** MachineSpec; `clusterName` is required on a Machine, filled in from the owner in templates. */
function machineSpec(requireCluster: boolean): Schema {
  return obj({
    clusterName: name(63),
    bootstrap: obj({ configRef: contractRef(), dataSecretName: str({ minLength: 0, maxLength: 253 }) }, undefined, { minProperties: 1 }),
    infrastructureRef: contractRef(),
    version: str({ minLength: 1, maxLength: 256 }),
    providerID: str({ minLength: 1, maxLength: 512 }),
    failureDomain: str({ minLength: 1, maxLength: 256 }),
    minReadySeconds: int32({ minimum: 0 }),
    readinessGates: list(obj({ conditionType: str(), polarity: str({ enum: ['Positive', 'Negative'] }) }, ['conditionType']), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['conditionType'], maxItems: 32 }),
    deletion: obj({
      nodeDrainTimeoutSeconds: int32({ minimum: 0 }),
      nodeVolumeDetachTimeoutSeconds: int32({ minimum: 0 }),
      nodeDeletionTimeoutSeconds: int32({ minimum: 0 }),
    }),
    taints: list(obj({ key: str(), value: str(), effect: str({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }), propagation: str({ enum: ['Always', 'OnInitialization'] }) }, ['key', 'effect', 'propagation'])),
  }, requireCluster ? ['clusterName', 'bootstrap', 'infrastructureRef'] : ['bootstrap', 'infrastructureRef']);
}

const machineTemplate = (): Schema => obj({ metadata: templateMeta(), spec: machineSpec(false) }, ['spec']);

/** The replica counts MachineSets and MachineDeployments report. */
const replicaStatus = (): Record<string, Schema> => ({
  selector: str({ maxLength: 4096 }),
  replicas: int32(),
  readyReplicas: int32(),
  availableReplicas: int32(),
  upToDateReplicas: int32(),
});

const deletionOrder = (): Schema => obj({ order: str({ enum: ['Random', 'Newest', 'Oldest'] }) });

interface Column { name: string; type: string; jsonPath: string; description?: string; priority?: number }
const col = (name: string, type: string, jsonPath: string, description: string, priority?: number): Column => ({ name, type, jsonPath, description, ...(priority ? { priority } : {}) });
const condCol = (name: string, type: string, description: string, priority?: number) => col(name, 'string', `.status.conditions[?(@.type=="${type}")].status`, description, priority);
const age = (kind: string) => col('Age', 'date', '.metadata.creationTimestamp', `Time duration since creation of ${kind}`);

interface Definition {
  group: string;
  kind: string;
  plural: string;
  shortNames?: string[];
  spec: Schema;
  /** Without a status: no status subresource (Cluster API's templates). */
  status?: Schema;
  columns: Column[];
  scale?: boolean;
  /** Whether an object may leave out spec (a KubeadmConfigTemplate may). */
  specOptional?: boolean;
}

/** The labels of a provider's CRDs: which provider, and the contract version its kinds speak. */
const PROVIDER_LABELS: Record<string, Record<string, string>> = {
  [GROUP]: { 'cluster.x-k8s.io/provider': 'cluster-api' },
  [INFRA_GROUP]: { 'cluster.x-k8s.io/provider': 'infrastructure-local', 'cluster.x-k8s.io/v1beta2': 'v1beta2' },
  [CONTROL_PLANE_GROUP]: { 'cluster.x-k8s.io/provider': 'control-plane-kubeadm', 'cluster.x-k8s.io/v1beta2': 'v1beta2' },
  [BOOTSTRAP_GROUP]: { 'cluster.x-k8s.io/provider': 'bootstrap-kubeadm', 'cluster.x-k8s.io/v1beta2': 'v1beta2' },
};

function crd(d: Definition): CrdManifest {
  const labels = PROVIDER_LABELS[d.group];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${d.plural}.${d.group}`,
      annotations: { 'include.release.openshift.io/self-managed-high-availability': 'true', 'include.release.openshift.io/single-node-developer': 'true' },
      labels,
    },
    spec: {
      group: d.group,
      names: { kind: d.kind, listKind: `${d.kind}List`, plural: d.plural, singular: d.kind.toLowerCase(), ...(d.shortNames ? { shortNames: d.shortNames } : {}), categories: ['cluster-api'] },
      scope: 'Namespaced',
      versions: [{
        name: 'v1beta2',
        served: true,
        storage: true,
        subresources: { ...(d.status ? { status: {} } : {}), ...(d.scale ? { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } } : {}) },
        ...(d.columns.length ? { additionalPrinterColumns: d.columns } : {}),
        schema: {
          openAPIV3Schema: obj({
            apiVersion: str(),
            kind: str(),
            metadata: { type: 'object' },
            spec: d.spec,
            ...(d.status ? { status: d.status } : {}),
          }, d.specOptional ? undefined : ['spec'], { description: `${d.kind} (${d.group}/v1beta2).` }),
        },
      }],
    },
  };
}

const cluster: Definition = {
  group: GROUP, kind: 'Cluster', plural: 'clusters', shortNames: ['cl'],
  spec: obj({
    paused: bool(),
    clusterNetwork: obj({
      apiServerPort: int32({ minimum: 1, maximum: 65535 }),
      services: obj({ cidrBlocks: list(str()) }),
      pods: obj({ cidrBlocks: list(str()) }),
      serviceDomain: str(),
    }),
    controlPlaneEndpoint: obj({ host: str({ maxLength: 512 }), port: int32({ minimum: 1, maximum: 65535 }) }),
    controlPlaneRef: contractRef(),
    infrastructureRef: contractRef(),
  }),
  status: obj({
    conditions: conditions(),
    initialization: obj({ infrastructureProvisioned: bool(), controlPlaneInitialized: bool() }),
    controlPlane: obj({ desiredReplicas: int32(), replicas: int32(), upToDateReplicas: int32(), readyReplicas: int32(), availableReplicas: int32() }),
    workers: obj({ desiredReplicas: int32(), replicas: int32(), upToDateReplicas: int32(), readyReplicas: int32(), availableReplicas: int32() }),
    failureDomains: list(obj({ name: name(256), controlPlane: bool(), attributes: stringMap() }, ['name']), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], maxItems: 100 }),
    phase: str({ enum: ['Pending', 'Provisioning', 'Provisioned', 'Deleting', 'Failed', 'Unknown'] }),
    observedGeneration: int64({ minimum: 1 }),
  }),
  columns: [
    col('ClusterClass', 'string', '.spec.topology.classRef.name', 'ClusterClass of this Cluster, empty if the Cluster is not using a ClusterClass'),
    condCol('Available', 'Available', 'Cluster pass all availability checks'),
    col('CP Desired', 'integer', '.status.controlPlane.desiredReplicas', 'The desired number of control plane machines'),
    col('CP Current', 'integer', '.status.controlPlane.replicas', 'The number of control plane machines', 10),
    col('CP Ready', 'integer', '.status.controlPlane.readyReplicas', 'The number of control plane machines with Ready condition true', 10),
    col('CP Available', 'integer', '.status.controlPlane.availableReplicas', 'The number of control plane machines with Available condition true'),
    col('CP Up-to-date', 'integer', '.status.controlPlane.upToDateReplicas', 'The number of control plane machines with UpToDate condition true'),
    col('W Desired', 'integer', '.status.workers.desiredReplicas', 'The desired number of worker machines'),
    col('W Current', 'integer', '.status.workers.replicas', 'The number of worker machines', 10),
    col('W Ready', 'integer', '.status.workers.readyReplicas', 'The number of worker machines with Ready condition true', 10),
    col('W Available', 'integer', '.status.workers.availableReplicas', 'The number of worker machines with Available condition true'),
    col('W Up-to-date', 'integer', '.status.workers.upToDateReplicas', 'The number of worker machines with UpToDate condition true'),
    condCol('Paused', 'Paused', 'Reconciliation paused', 10),
    col('Phase', 'string', '.status.phase', 'Cluster status such as Pending/Provisioning/Provisioned/Deleting/Failed'),
    age('Cluster'),
    col('Version', 'string', '.spec.topology.version', 'Kubernetes version associated with this Cluster'),
  ],
};

const machine: Definition = {
  group: GROUP, kind: 'Machine', plural: 'machines', shortNames: ['ma'],
  spec: machineSpec(true),
  status: obj({
    conditions: conditions(),
    initialization: obj({ infrastructureProvisioned: bool(), bootstrapDataSecretCreated: bool() }),
    nodeRef: obj({ name: name() }, ['name']),
    nodeInfo: obj({ machineID: str(), systemUUID: str(), bootID: str(), kernelVersion: str(), osImage: str(), containerRuntimeVersion: str(), kubeletVersion: str(), kubeProxyVersion: str(), operatingSystem: str(), architecture: str() }),
    certificatesExpiryDate: time(),
    lastUpdated: time(),
    addresses: machineAddresses(),
    failureDomain: str({ maxLength: 256 }),
    phase: str({ enum: ['Pending', 'Provisioning', 'Provisioned', 'Running', 'Updating', 'Deleting', 'Deleted', 'Failed', 'Unknown'] }),
    observedGeneration: int64({ minimum: 1 }),
    deletion: obj({ nodeDrainStartTime: time(), waitForNodeVolumeDetachStartTime: time(), waitForPreDrainHookStartTime: time(), waitForPreTerminateHookStartTime: time() }),
  }),
  columns: [
    col('Cluster', 'string', '.spec.clusterName', 'Cluster'),
    col('Node Name', 'string', '.status.nodeRef.name', 'Node name associated with this machine'),
    col('Provider ID', 'string', '.spec.providerID', 'Provider ID', 10),
    col('Failure domain', 'string', '.status.failureDomain', 'The failure domain where the Machine has been scheduled'),
    condCol('Ready', 'Ready', 'Machine pass all readiness checks'),
    condCol('Available', 'Available', 'Machine is Ready for at least MinReadySeconds'),
    condCol('Up-to-date', 'UpToDate', " Machine spec matches the spec of the Machine's owner resource, e.g. MachineDeployment"),
    col('Internal-IP', 'string', '.status.addresses[?(@.type=="InternalIP")].address', 'Internal IP of the machine', 10),
    col('External-IP', 'string', '.status.addresses[?(@.type=="ExternalIP")].address', 'External IP of the machine', 10),
    col('OS-Image', 'string', '.status.nodeInfo.osImage', 'OS Image reported by the node', 10),
    condCol('Paused', 'Paused', 'Reconciliation paused', 10),
    col('Phase', 'string', '.status.phase', 'Machine status such as Terminating/Pending/Running/Failed etc'),
    age('Machine'),
    col('Version', 'string', '.spec.version', 'Kubernetes version associated with this Machine'),
  ],
};

const replicaColumns = (kind: string): Column[] => [
  col('Desired', 'integer', '.spec.replicas', 'The desired number of machines'),
  col('Current', 'integer', '.status.replicas', 'The number of machines'),
  col('Ready', 'integer', '.status.readyReplicas', 'The number of machines with Ready condition true'),
  col('Available', 'integer', '.status.availableReplicas', 'The number of machines with Available condition true'),
  col('Up-to-date', 'integer', '.status.upToDateReplicas', 'The number of machines with UpToDate condition true'),
  condCol('Paused', 'Paused', 'Reconciliation paused', 10),
  ...(kind === 'MachineDeployment' ? [col('Phase', 'string', '.status.phase', 'MachineDeployment status such as ScalingUp/ScalingDown/Running/Failed/Unknown')] : []),
  age(kind),
  col('Version', 'string', '.spec.template.spec.version', `Kubernetes version associated with this ${kind}`),
];

const machineSet: Definition = {
  group: GROUP, kind: 'MachineSet', plural: 'machinesets', shortNames: ['ms'], scale: true,
  spec: obj({
    clusterName: name(63),
    replicas: int32({ minimum: 0 }),
    selector: labelSelector(),
    template: machineTemplate(),
    machineNaming: obj({ template: str({ maxLength: 256 }) }),
    deletion: deletionOrder(),
  }, ['clusterName', 'selector', 'template']),
  status: obj({ conditions: conditions(), ...replicaStatus(), observedGeneration: int64({ minimum: 1 }) }),
  columns: [col('Cluster', 'string', '.spec.clusterName', 'Cluster'), ...replicaColumns('MachineSet')],
};

const machineDeployment: Definition = {
  group: GROUP, kind: 'MachineDeployment', plural: 'machinedeployments', shortNames: ['md'], scale: true,
  spec: obj({
    clusterName: name(63),
    replicas: int32({ minimum: 0 }),
    rollout: obj({
      after: time(),
      strategy: obj({
        type: str({ enum: ['RollingUpdate', 'OnDelete'] }),
        rollingUpdate: obj({ maxUnavailable: intOrString(), maxSurge: intOrString() }),
      }),
    }),
    selector: labelSelector(),
    template: machineTemplate(),
    machineNaming: obj({ template: str({ maxLength: 256 }) }),
    remediation: obj({ maxInFlight: intOrString() }),
    deletion: deletionOrder(),
    paused: bool(),
  }, ['clusterName', 'selector', 'template']),
  status: obj({ conditions: conditions(), observedGeneration: int64({ minimum: 1 }), ...replicaStatus(), phase: str({ enum: ['ScalingUp', 'ScalingDown', 'Running', 'Failed', 'Unknown'] }) }),
  columns: [
    col('Cluster', 'string', '.spec.clusterName', 'Cluster'),
    condCol('Available', 'Available', 'Cluster pass all availability checks'),
    ...replicaColumns('MachineDeployment'),
  ],
};

const machineHealthCheck: Definition = {
  group: GROUP, kind: 'MachineHealthCheck', plural: 'machinehealthchecks', shortNames: ['mhc', 'mhcs'],
  spec: obj({
    clusterName: name(63),
    selector: labelSelector(),
    checks: obj({
      nodeStartupTimeoutSeconds: int32({ minimum: 0 }),
      unhealthyNodeConditions: list(obj({ type: str({ minLength: 1 }), status: str({ minLength: 1 }), timeoutSeconds: int32({ minimum: 0 }) }, ['type', 'status', 'timeoutSeconds']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 }),
      unhealthyMachineConditions: list(obj({ type: str({ minLength: 1, maxLength: 316 }), status: str({ enum: ['True', 'False', 'Unknown'] }), timeoutSeconds: int32({ minimum: 0 }) }, ['type', 'status', 'timeoutSeconds']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 }),
    }, undefined, { minProperties: 1 }),
    remediation: obj({
      triggerIf: obj({ unhealthyLessThanOrEqualTo: intOrString(), unhealthyInRange: str({ minLength: 1, maxLength: 32, pattern: '^\\[[0-9]+-[0-9]+\\]$' }) }, undefined, { minProperties: 1 }),
      templateRef: obj({ kind: str(), name: str(), apiVersion: str() }, ['kind', 'name', 'apiVersion']),
    }, undefined, { minProperties: 1 }),
  }, ['clusterName', 'selector']),
  status: obj({
    conditions: conditions(),
    expectedMachines: int32({ minimum: 0 }),
    currentHealthy: int32({ minimum: 0 }),
    remediationsAllowed: int32({ minimum: 0 }),
    observedGeneration: int64({ minimum: 1 }),
    targets: list(str({ minLength: 1, maxLength: 253 }), { 'x-kubernetes-list-type': 'atomic', maxItems: 10000 }),
  }),
  columns: [
    col('Cluster', 'string', '.spec.clusterName', 'Cluster'),
    col('Replicas', 'integer', '.status.expectedMachines', 'Number of machines currently monitored'),
    col('Healthy', 'integer', '.status.currentHealthy', 'Current observed healthy machines'),
    condCol('Paused', 'Paused', 'Reconciliation paused', 10),
    age('MachineHealthCheck'),
  ],
};

/** LocalMachine's spec: the instance to run, as the local cloud's API names it. */
const localMachineSpec = (): Schema => obj({
  providerID: str({ minLength: 1, maxLength: 512 }),
  instanceType: str({ minLength: 1, maxLength: 64, default: 'local.medium' }),
});

const localCluster: Definition = {
  group: INFRA_GROUP, kind: 'LocalCluster', plural: 'localclusters',
  spec: obj({ controlPlaneEndpoint: obj({ host: str({ maxLength: 512 }), port: int32({ minimum: 1, maximum: 65535 }) }) }),
  status: obj({
    conditions: conditions(),
    initialization: obj({ provisioned: bool() }),
    failureDomains: list(obj({ name: name(256), controlPlane: bool(), attributes: stringMap() }, ['name']), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], maxItems: 100 }),
  }),
  columns: [
    col('Cluster', 'string', '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name', 'Cluster'),
    col('Provisioned', 'boolean', '.status.initialization.provisioned', 'The local cloud is ready for the cluster\'s machines'),
    col('Endpoint', 'string', '.spec.controlPlaneEndpoint.host', 'API endpoint', 10),
    age('LocalCluster'),
  ],
};

const localMachine: Definition = {
  group: INFRA_GROUP, kind: 'LocalMachine', plural: 'localmachines',
  spec: localMachineSpec(),
  status: obj({
    conditions: conditions(),
    initialization: obj({ provisioned: bool() }),
    addresses: machineAddresses(),
    failureDomain: str({ maxLength: 256 }),
    instanceID: str(),
    instanceState: str({ enum: ['pending', 'running', 'stopping', 'stopped', 'terminated'] }),
  }),
  columns: [
    col('Cluster', 'string', '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name', 'Cluster'),
    col('Machine', 'string', '.metadata.ownerReferences[?(@.kind=="Machine")].name', 'Machine object which owns this LocalMachine'),
    col('Provider ID', 'string', '.spec.providerID', 'Provider ID'),
    col('Type', 'string', '.spec.instanceType', 'Instance type'),
    col('Zone', 'string', '.status.failureDomain', 'The zone the instance runs in'),
    col('State', 'string', '.status.instanceState', 'The instance\'s state in the local cloud'),
    age('LocalMachine'),
  ],
};

const localMachineTemplate: Definition = {
  group: INFRA_GROUP, kind: 'LocalMachineTemplate', plural: 'localmachinetemplates',
  spec: obj({ template: obj({ metadata: templateMeta(), spec: localMachineSpec() }, ['spec']) }, ['template']),
  status: obj({}),
  columns: [col('Type', 'string', '.spec.template.spec.instanceType', 'Instance type'), age('LocalMachineTemplate')],
};

// Cluster API's kubeadm providers: the bootstrap provider's KubeadmConfig/KubeadmConfigTemplate
// (bootstrap.cluster.x-k8s.io) and the control-plane provider's KubeadmControlPlane
// (controlplane.cluster.x-k8s.io), api/{bootstrap,controlplane}/kubeadm/v1beta2. kubeadm's own
// configuration types keep Cluster API's field names and limits; the fields bosun does not read
// are kept too, so that YAML written for Cluster API applies unchanged.

const text = (max: number) => str({ minLength: 1, maxLength: max });
const texts = (max: number, maxItems: number) => list(text(max), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems });
/** kubeadm v1beta4's extra arguments: a list of name/value pairs (a flag may repeat). */
const extraArgs = (): Schema => list(obj({ name: text(256), value: str({ minLength: 0, maxLength: 1024 }) }, ['name', 'value']), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name', 'value'], minItems: 1, maxItems: 100 });
const extraEnvs = (): Schema => list(obj({ name: str(), value: str(), valueFrom: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, ['name']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 });
const extraVolumes = (): Schema => list(obj({ name: text(512), hostPath: text(512), mountPath: text(512), readOnly: bool(), pathType: str() }, ['name', 'hostPath', 'mountPath']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 });
const controlPlaneComponent = (): Schema => obj({ extraArgs: extraArgs(), extraVolumes: extraVolumes(), extraEnvs: extraEnvs() }, undefined, { minProperties: 1 });
const secretKey = (): Schema => obj({ secret: obj({ name: name(), key: text(256) }, ['name', 'key']) }, ['secret']);
const taint = (): Schema => obj({ key: str(), value: str(), effect: str({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }), timeAdded: time() }, ['key', 'effect']);
const nodeRegistration = (): Schema => obj({
  name: text(253),
  criSocket: text(512),
  // Unset: kubeadm's default (the control-plane taint on control-plane nodes); [] : no taints.
  taints: list(taint(), { minItems: 0, maxItems: 100 }),
  kubeletExtraArgs: extraArgs(),
  ignorePreflightErrors: texts(512, 50),
  imagePullPolicy: str({ enum: ['Always', 'IfNotPresent', 'Never'] }),
  imagePullSerial: bool(),
}, undefined, { minProperties: 1 });
const apiEndpoint = (): Schema => obj({ advertiseAddress: text(39), bindPort: int32({ minimum: 1 }) }, undefined, { minProperties: 1 });
const timeouts = (): Schema => obj(Object.fromEntries(['controlPlaneComponentHealthCheckSeconds', 'kubeletHealthCheckSeconds', 'kubernetesAPICallSeconds', 'etcdAPICallSeconds', 'tlsBootstrapSeconds', 'discoverySeconds'].map((k) => [k, int32({ minimum: 0 })])), undefined, { minProperties: 1 });

const clusterConfiguration = (): Schema => obj({
  etcd: obj({
    local: obj({ imageRepository: text(512), imageTag: text(256), dataDir: text(512), extraArgs: extraArgs(), extraEnvs: extraEnvs(), serverCertSANs: texts(253, 100), peerCertSANs: texts(253, 100) }, undefined, { minProperties: 1 }),
    external: obj({ endpoints: texts(512, 50), caFile: text(512), certFile: text(512), keyFile: text(512) }, ['endpoints', 'caFile', 'certFile', 'keyFile']),
  }, undefined, { minProperties: 1 }),
  controlPlaneEndpoint: text(512),
  apiServer: obj({ extraArgs: extraArgs(), extraVolumes: extraVolumes(), extraEnvs: extraEnvs(), certSANs: texts(253, 100) }, undefined, { minProperties: 1 }),
  controllerManager: controlPlaneComponent(),
  scheduler: controlPlaneComponent(),
  dns: obj({ imageRepository: text(512), imageTag: text(256) }, undefined, { minProperties: 1 }),
  certificatesDir: text(512),
  imageRepository: text(512),
  featureGates: { type: 'object', additionalProperties: bool() },
  certificateValidityPeriodDays: int32({ minimum: 1, maximum: 1095 }),
  caCertificateValidityPeriodDays: int32({ minimum: 1, maximum: 36500 }),
  encryptionAlgorithm: str({ enum: ['ECDSA-P256', 'ECDSA-P384', 'RSA-2048', 'RSA-3072', 'RSA-4096'] }),
}, undefined, { minProperties: 1 });

const initConfiguration = (): Schema => obj({
  bootstrapTokens: list(obj({ token: text(23), description: text(512), ttlSeconds: int32({ minimum: 0 }), expires: time(), usages: texts(256, 100), groups: texts(256, 100) }, ['token']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 }),
  nodeRegistration: nodeRegistration(),
  localAPIEndpoint: apiEndpoint(),
  skipPhases: texts(256, 50),
  patches: obj({ directory: text(512) }, undefined, { minProperties: 1 }),
  timeouts: timeouts(),
}, undefined, { minProperties: 1 });

const joinConfiguration = (): Schema => obj({
  nodeRegistration: nodeRegistration(),
  caCertPath: text(512),
  discovery: obj({
    bootstrapToken: obj({ token: text(512), apiServerEndpoint: text(512), caCertHashes: texts(512, 100), unsafeSkipCAVerification: bool() }, undefined, { minProperties: 1 }),
    file: obj({ kubeConfigPath: text(512), kubeConfig: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, ['kubeConfigPath']),
    tlsBootstrapToken: text(512),
  }, undefined, { minProperties: 1 }),
  controlPlane: obj({ localAPIEndpoint: apiEndpoint() }),
  skipPhases: texts(256, 50),
  patches: obj({ directory: text(512) }, undefined, { minProperties: 1 }),
  timeouts: timeouts(),
}, undefined, { minProperties: 1 });

/** KubeadmConfigSpec: a KubeadmConfig's spec, a KubeadmConfigTemplate's and a KubeadmControlPlane's kubeadmConfigSpec. */
const kubeadmConfigSpec = (): Schema => obj({
  clusterConfiguration: clusterConfiguration(),
  initConfiguration: initConfiguration(),
  joinConfiguration: joinConfiguration(),
  files: list(obj({
    path: text(512),
    owner: text(256),
    permissions: str({ minLength: 1, maxLength: 16 }),
    encoding: str({ enum: ['base64', 'gzip', 'gzip+base64'] }),
    append: bool(),
    content: str({ minLength: 1, maxLength: 10240 }),
    contentFrom: secretKey(),
    contentFormat: str({ enum: ['Raw', 'Template'] }),
  }, ['path']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 200 }),
  diskSetup: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  mounts: list(texts(512, 100), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 }),
  bootCommands: texts(10240, 1000),
  preKubeadmCommands: texts(10240, 1000),
  postKubeadmCommands: texts(10240, 1000),
  users: list(obj({
    name: text(256),
    gecos: text(256),
    groups: text(256),
    homeDir: text(256),
    inactive: bool(),
    shell: text(256),
    passwd: text(256),
    passwdFrom: secretKey(),
    primaryGroup: text(256),
    lockPassword: bool(),
    sudo: text(256),
    sshAuthorizedKeys: list(str({ minLength: 1, maxLength: 2048 }), { 'x-kubernetes-list-type': 'atomic', maxItems: 100 }),
  }, ['name']), { 'x-kubernetes-list-type': 'atomic', minItems: 1, maxItems: 100 }),
  ntp: obj({ servers: texts(512, 100), enabled: bool() }, undefined, { minProperties: 1 }),
  format: str({ enum: ['cloud-config', 'ignition'] }),
  verbosity: int32(),
  ignition: obj({ containerLinuxConfig: obj({ additionalConfig: str({ minLength: 1, maxLength: 32768 }), strict: bool() }, undefined, { minProperties: 1 }) }, undefined, { minProperties: 1 }),
});

/** The label column Cluster API's kubeadm kinds show (its `.metadata.labels['…']` written in the dot form, as the other kinds here write it). */
const clusterLabelColumn = () => col('Cluster', 'string', '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name', 'Cluster');

const kubeadmConfig: Definition = {
  group: BOOTSTRAP_GROUP, kind: 'KubeadmConfig', plural: 'kubeadmconfigs',
  spec: kubeadmConfigSpec(),
  specOptional: true,
  status: obj({
    conditions: conditions(),
    initialization: obj({ dataSecretCreated: bool() }, undefined, { minProperties: 1 }),
    dataSecretName: name(),
    observedGeneration: int64({ minimum: 1 }),
  }, undefined, { minProperties: 1 }),
  columns: [
    clusterLabelColumn(),
    condCol('Paused', 'Paused', 'Reconciliation paused', 10),
    col('Data secret created', 'string', '.status.initialization.dataSecretCreated', 'Boostrap secret is created'),
    age('KubeadmConfig'),
  ],
};

const kubeadmConfigTemplate: Definition = {
  group: BOOTSTRAP_GROUP, kind: 'KubeadmConfigTemplate', plural: 'kubeadmconfigtemplates',
  spec: obj({ template: obj({ metadata: templateMeta(), spec: kubeadmConfigSpec() }) }, ['template']),
  specOptional: true,
  columns: [
    col('ClusterClass', 'string', '.metadata.ownerReferences[?(@.kind=="ClusterClass")].name', 'Name of the ClusterClass owning this template'),
    col('Cluster', 'string', '.metadata.ownerReferences[?(@.kind=="Cluster")].name', 'Name of the Cluster owning this template'),
    age('KubeadmConfigTemplate'),
  ],
};

const kubeadmControlPlane: Definition = {
  group: CONTROL_PLANE_GROUP, kind: 'KubeadmControlPlane', plural: 'kubeadmcontrolplanes', shortNames: ['kcp'], scale: true,
  spec: obj({
    // Stacked etcd wants an odd count; validation.ts refuses an even one (the webhook's rule).
    replicas: int32({ minimum: 1 }),
    version: str({ minLength: 1, maxLength: 256 }),
    machineTemplate: obj({
      metadata: obj({ labels: stringMap(), annotations: stringMap() }, undefined, { minProperties: 1 }),
      spec: obj({
        infrastructureRef: contractRef(),
        readinessGates: list(obj({ conditionType: str(), polarity: str({ enum: ['Positive', 'Negative'] }) }, ['conditionType']), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['conditionType'], minItems: 1, maxItems: 32 }),
        deletion: obj({ nodeDrainTimeoutSeconds: int32({ minimum: 0 }), nodeVolumeDetachTimeoutSeconds: int32({ minimum: 0 }), nodeDeletionTimeoutSeconds: int32({ minimum: 0 }) }, undefined, { minProperties: 1 }),
        taints: list(obj({ key: str(), value: str(), effect: str({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }), propagation: str({ enum: ['Always', 'OnInitialization'] }) }, ['key', 'effect', 'propagation']), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['key', 'effect'], minItems: 1, maxItems: 64 }),
      }, ['infrastructureRef']),
    }, ['spec']),
    kubeadmConfigSpec: kubeadmConfigSpec(),
    rollout: obj({
      after: time(),
      before: obj({ certificatesExpiryDays: int32({ minimum: 7 }) }, undefined, { minProperties: 1 }),
      strategy: obj({
        type: str({ enum: ['RollingUpdate'] }),
        rollingUpdate: obj({ maxSurge: { ...intOrString(), enum: [0, 1] } }, undefined, { minProperties: 1 }),
      }, ['type'], { minProperties: 1 }),
    }, undefined, { minProperties: 1 }),
    remediation: obj({ maxRetry: int32(), retryPeriodSeconds: int32({ minimum: 0 }), minHealthyPeriodSeconds: int32({ minimum: 0 }) }, undefined, { minProperties: 1 }),
    machineNaming: obj({ template: str({ minLength: 1, maxLength: 256 }) }, undefined, { minProperties: 1 }),
  }, ['machineTemplate', 'version']),
  status: obj({
    conditions: conditions(),
    initialization: obj({ controlPlaneInitialized: bool() }, undefined, { minProperties: 1 }),
    selector: str({ minLength: 1, maxLength: 4096 }),
    replicas: int32(),
    readyReplicas: int32(),
    availableReplicas: int32(),
    upToDateReplicas: int32(),
    version: str({ minLength: 1, maxLength: 256 }),
    observedGeneration: int64({ minimum: 1 }),
    lastRemediation: obj({ machine: name(), time: time(), retryCount: int32({ minimum: 0 }) }, ['machine', 'time', 'retryCount']),
  }),
  columns: [
    clusterLabelColumn(),
    condCol('Available', 'Available', 'Cluster pass all availability checks'),
    col('Desired', 'integer', '.spec.replicas', 'The desired number of machines'),
    col('Current', 'integer', '.status.replicas', 'The number of machines'),
    col('Ready', 'integer', '.status.readyReplicas', 'The number of machines with Ready condition true'),
    col('Available', 'integer', '.status.availableReplicas', 'The number of machines with Available condition true'),
    col('Up-to-date', 'integer', '.status.upToDateReplicas', 'The number of machines with UpToDate condition true'),
    condCol('Paused', 'Paused', 'Reconciliation paused', 10),
    col('Initialized', 'boolean', '.status.initialization.controlPlaneInitialized', 'This denotes whether or not the control plane can accept requests'),
    age('KubeadmControlPlane'),
    col('Version', 'string', '.spec.version', 'Kubernetes version associated with this control plane'),
  ],
};

/** Every CRD, in the order the payload files are named. */
export const CLUSTER_API_CRDS: ReadonlyArray<{ file: string; crd: CrdManifest }> = [
  cluster, machine, machineSet, machineDeployment, machineHealthCheck, localCluster, localMachine, localMachineTemplate,
  kubeadmConfig, kubeadmConfigTemplate, kubeadmControlPlane,
].map((d) => ({ file: `0000_30_cluster-api_01_${d.plural}.crd.yaml`, crd: crd(d) }));

/** A CRD as its payload file holds it: a header saying where it comes from, then YAML. */
export function crdYaml(crd: CrdManifest): string {
  return `# Generated from src/capi/crds.ts by scripts/generate-capi-crds.ts; do not edit.\n${stringify(crd, { lineWidth: 0 })}`;
}

/** The payload file of Cluster API's webhook configurations (webhooks.ts), generated as the CRDs are. */
export function webhooksYaml(): string {
  const header = `# Generated from src/capi/webhooks.ts by scripts/generate-capi-crds.ts; do not edit.
# Cluster API's admission webhooks (defaults and validation of its kinds), served by the
# controllers' process behind the Service capi-controllers; the service CA injects caBundle.
`;
  return header + payloadWebhookConfigurations().map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
}
