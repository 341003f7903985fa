// The cluster template `bosun cluster generate` fills in, as `clusterctl generate cluster` fills in
// a provider's cluster-template.yaml: Cluster API's own manifests (test/e2e/data/
// infrastructure-docker/main/bases/cluster-with-kcp.yaml and md.yaml — Cluster,
// KubeadmControlPlane, the infrastructure cluster, the machine templates, KubeadmConfigTemplate,
// MachineDeployment) with only the infrastructure kinds replaced by LocalCluster and
// LocalMachineTemplate (and the Docker- and e2e-only bits dropped: the ClusterResourceSet label, the
// kcp-adoption label, host.docker.internal, the fixed failure domain). Variables are clusterctl's
// (`${NAME}`, `${NAME:=default}`, `${NAME:-default}`); the output is clusterctl's too: every object
// with the target namespace, keys sorted, documents joined by `---`.
//
// The networks: a workload cluster's pods and Services live on loopback addresses like the
// management cluster's, so they must overlap none of its ranges (127.0.0.0/16: machines
// 127.0.1.x, internal balancers 127.0.100.x, balancers 127.0.200.x; pods 127.1.0.0/16; Services
// 127.30.0.0/16). clusterNetworkFor picks, from the cluster's namespace and name, slot
// k = FNV-1a(namespace/name) mod 64 and gives pods 127.(64+k).0.0/16 and Services
// 127.(128+k).0.0/16: the same cluster always gets the same ranges, and two clusters share them
// only if their slots collide (1 in 64) — POD_CIDR / SERVICE_CIDR in the environment override it.
// A Cluster whose clusterNetwork leaves a range out gets these too. localNetworkProblems says why a
// range the user gives cannot be served by the local cloud's machines: outside 127.0.0.0/8 (pod and
// Service addresses are loopback), overlapping the management cluster's ranges or each other, or
// too narrow — each machine takes the /24 of the pods' range numbered after its address's last
// octet (127.0.1.N: the N-th), so the pods need a /16 or wider.
import { parseAllDocuments, stringify } from 'yaml';
import type * as api from '../../api/index.js';
import { BosunError } from '../../common/errors.js';
import { cidrsOverlap, parseCidr } from '../../common/ipv4.js';

export const CLUSTER_TEMPLATE = `apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: '\${CLUSTER_NAME}'
spec:
  clusterNetwork:
    services:
      cidrBlocks: ['\${SERVICE_CIDR}']
    pods:
      cidrBlocks: ['\${POD_CIDR}']
    serviceDomain: '\${SERVICE_DOMAIN:=cluster.local}'
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: LocalCluster
    name: '\${CLUSTER_NAME}'
  controlPlaneRef:
    kind: KubeadmControlPlane
    apiGroup: controlplane.cluster.x-k8s.io
    name: "\${CLUSTER_NAME}-control-plane"
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: LocalCluster
metadata:
  name: '\${CLUSTER_NAME}'
spec: {}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: LocalMachineTemplate
metadata:
  name: "\${CLUSTER_NAME}-control-plane"
spec:
  template:
    spec:
      instanceType: "\${LOCAL_CONTROL_PLANE_MACHINE_TYPE:=local.medium}"
---
kind: KubeadmControlPlane
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
metadata:
  name: "\${CLUSTER_NAME}-control-plane"
spec:
  replicas: \${CONTROL_PLANE_MACHINE_COUNT}
  machineTemplate:
    spec:
      infrastructureRef:
        kind: LocalMachineTemplate
        apiGroup: infrastructure.cluster.x-k8s.io
        name: "\${CLUSTER_NAME}-control-plane"
  kubeadmConfigSpec:
    clusterConfiguration:
      apiServer:
        certSANs: [localhost, 127.0.0.1, 0.0.0.0]
  version: "\${KUBERNETES_VERSION}"
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: LocalMachineTemplate
metadata:
  name: "\${CLUSTER_NAME}-md-0"
spec:
  template:
    spec:
      instanceType: "\${LOCAL_NODE_MACHINE_TYPE:=local.medium}"
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: "\${CLUSTER_NAME}-md-0"
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: "\${CLUSTER_NAME}-md-0"
spec:
  clusterName: "\${CLUSTER_NAME}"
  replicas: \${WORKER_MACHINE_COUNT}
  selector:
    matchLabels:
  template:
    spec:
      clusterName: "\${CLUSTER_NAME}"
      version: "\${KUBERNETES_VERSION}"
      bootstrap:
        configRef:
          name: "\${CLUSTER_NAME}-md-0"
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: KubeadmConfigTemplate
      infrastructureRef:
        name: "\${CLUSTER_NAME}-md-0"
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: LocalMachineTemplate
`;

/** The flavors (clusterctl's --flavor picks cluster-template-<flavor>.yaml); "" is the default template. */
export const FLAVORS: Record<string, string> = { '': CLUSTER_TEMPLATE };

/** A template variable with no value (clusterctl: "value for variables [X] is not set"). */
export class TemplateVariableError extends BosunError {
  constructor(message: string) {
    super('TemplateVariableMissing', message);
  }
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[=-])([^}]*))?\}/g;

/** The variables a template names, in order of first use (clusterctl's `generate cluster --list-variables`). */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(VARIABLE)].filter((m) => m[2] === undefined).map((m) => m[1]))];
}

/**
 * envsubst as clusterctl runs it: `${X}` is X's value, `${X:=d}` / `${X:-d}` fall back to d when X
 * is unset or empty. A variable without a value or a default is an error naming every such variable.
 */
export function substitute(template: string, values: Record<string, string | undefined>): string {
  const missing = new Set<string>();
  const out = template.replace(VARIABLE, (_, name: string, op: string | undefined, fallback: string | undefined) => {
    const value = values[name];
    if (value !== undefined && value !== '') return value;
    if (op !== undefined) return fallback ?? '';
    missing.add(name);
    return '';
  });
  if (missing.size) throw new TemplateVariableError(`value for variables [${[...missing].join(', ')}] is not set. Please set the value using os environment variables`);
  return out;
}

/** The filled-in template as clusterctl prints it: every object in `namespace`, keys sorted, `---` between documents. */
export function renderObjects(text: string, namespace: string): api.KubeObject[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length) throw new TemplateVariableError(`the filled-in template is not YAML: ${doc.errors[0].message}`);
    const obj = doc.toJS() as api.KubeObject;
    return { ...obj, metadata: { ...obj.metadata, namespace } };
  });
}

export function toYaml(objects: api.KubeObject[]): string {
  return objects.map((o) => stringify(o, { sortMapEntries: true, indentSeq: false, lineWidth: 0 })).join('---\n');
}

/** 32-bit FNV-1a of a string. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The loopback ranges of a workload cluster (see the header): deterministic from its namespace and name. */
export function clusterNetworkFor(namespace: string, name: string): { podCidr: string; serviceCidr: string } {
  const slot = fnv1a(`${namespace}/${name}`) % 64;
  return { podCidr: `127.${64 + slot}.0.0/16`, serviceCidr: `127.${128 + slot}.0.0/16` };
}

/** The management cluster's loopback ranges (see the header), which no workload cluster may use. */
export const RESERVED_LOOPBACK_RANGES: ReadonlyArray<{ cidr: string; what: string }> = [
  { cidr: '127.0.0.0/16', what: 'the local cloud\'s machines and load balancers' },
  { cidr: '127.1.0.0/16', what: 'the management cluster\'s pods' },
  { cidr: '127.30.0.0/16', what: 'the management cluster\'s Services' },
];
const LOOPBACK = parseCidr('127.0.0.0/8')!;

/**
 * Why a workload cluster's networks cannot be served by the local cloud's machines (empty: they
 * can). `podCidr` and `serviceCidr` are the first cidrBlocks of Cluster.spec.clusterNetwork's pods and services.
 */
export function localNetworkProblems(network: { podCidr: string; serviceCidr: string }): string[] {
  const problems: string[] = [];
  const ranges: Array<{ field: string; cidr: string; maxBits: number; why: string }> = [
    { field: 'spec.clusterNetwork.pods.cidrBlocks[0]', cidr: network.podCidr, maxBits: 16, why: 'each machine takes the /24 numbered after its address\'s last octet, so the pods need a /16 or wider' },
    { field: 'spec.clusterNetwork.services.cidrBlocks[0]', cidr: network.serviceCidr, maxBits: 24, why: 'the Services need a /24 or wider' },
  ];
  const parsed: Array<{ field: string; cidr: string; range: { base: number; bits: number } }> = [];
  for (const r of ranges) {
    const range = parseCidr(r.cidr);
    const say = (what: string) => problems.push(`${r.field} ${JSON.stringify(r.cidr)} ${what}`);
    if (!range) {
      say('is not an IPv4 network such as 127.70.0.0/16');
      continue;
    }
    if (range.bits < LOOPBACK.bits || !cidrsOverlap(range, LOOPBACK)) {
      say('cannot be served by the local cloud\'s machines: their pod and Service addresses are loopback addresses, so the range must lie inside 127.0.0.0/8 (bosun cluster generate picks one, such as 127.70.0.0/16)');
      continue;
    }
    if (range.bits > r.maxBits) say(`is too narrow: ${r.why}`);
    for (const reserved of RESERVED_LOOPBACK_RANGES) if (cidrsOverlap(range, parseCidr(reserved.cidr)!)) say(`overlaps ${reserved.cidr}, ${reserved.what}`);
    parsed.push({ field: r.field, cidr: r.cidr, range });
  }
  if (parsed.length === 2 && cidrsOverlap(parsed[0].range, parsed[1].range)) problems.push(`${parsed[0].field} ${JSON.stringify(parsed[0].cidr)} and ${parsed[1].field} ${JSON.stringify(parsed[1].cidr)} overlap`);
  return problems;
}
