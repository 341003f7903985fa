// Services (core/v1): type ClusterIP and port defaults, a cluster IP and node ports allocated to
// them (service-allocation.ts) and kept across updates, names that are DNS labels, valid ports
// and cluster IPs, the single IPv4 family and internalTrafficPolicy Cluster of every type but
// ExternalName, externalTrafficPolicy (Cluster unless said, for NodePort and LoadBalancer) and the
// health-check node port of an ETP Local load balancer, and the TYPE / CLUSTER-IP / EXTERNAL-IP /
// PORT(S) columns.
import type * as api from '../../api/index.js';
import { jsonEqual } from '../../common/json.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, orNone, selectorString } from '../printing/columns.js';
import { needsHealthCheck, serviceAllocations } from './service-allocation.js';
import { ALL, builtinType, fillUnset, objectField, type KindStrategy } from './strategy.js';

type ServiceSpec = NonNullable<api.Service['spec']>;

const usesNodePorts = (spec: ServiceSpec | undefined): boolean => spec?.type === 'NodePort' || spec?.type === 'LoadBalancer';
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * Defaults, and what an update keeps of what the server allocated (kube's patchAllocatedValues
 * and dropTypeDependentFields): a cluster IP or node port the request leaves out stays, node
 * ports go when the type no longer uses them, the cluster IP when the type becomes ExternalName;
 * the health-check node port stays while the Service needs one and goes when it no longer does.
 */
function defaults(object: api.Service, previous: api.Service | undefined): void {
  const spec = objectField<ServiceSpec>(object, 'spec');
  if (!spec) return;
  fillUnset(spec, { type: 'ClusterIP', sessionAffinity: 'None' });
  const old = previous?.spec;
  // kube's SetDefaults_Service: no affinity, no affinity settings; ClientIP affinity for 3 hours unless said.
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  else if (spec.sessionAffinity === 'ClientIP' && !Number.isInteger(spec.sessionAffinityConfig?.clientIP?.timeoutSeconds)) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10_800 } };
  }
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  // The cluster is single-stack IPv4: a Service of any type but ExternalName is of that one family
  // (kube's service REST sets them with the cluster IP); turned into an ExternalName, it drops what
  // it had of them unchanged (dropTypeDependentFields), as it drops an unchanged traffic policy.
  if (spec.type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    // A headless Service without a selector (its endpoints are whatever one writes) asks for every
    // family the cluster has, here the one (kube's initIPFamilyFields); an update that says nothing
    // keeps what the Service had.
    const headlessWithoutSelector = spec.clusterIP === 'None' && Object.keys(spec.selector ?? {}).length === 0;
    const kept = old && old.type !== 'ExternalName' ? old.ipFamilyPolicy : undefined;
    fillUnset(spec, { ipFamilyPolicy: kept ?? (headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack') });
    if (!Array.isArray(spec.ipFamilies) || spec.ipFamilies.length === 0) spec.ipFamilies = ['IPv4'];
  } else if (old && old.type !== 'ExternalName') {
    if (spec.internalTrafficPolicy === old.internalTrafficPolicy) delete spec.internalTrafficPolicy;
    if (spec.ipFamilyPolicy === old.ipFamilyPolicy) delete spec.ipFamilyPolicy;
    if (jsonEqual(spec.ipFamilies, old.ipFamilies)) delete spec.ipFamilies;
  }
  if (!spec.clusterIP && Array.isArray(spec.clusterIPs) && typeof spec.clusterIPs[0] === 'string') spec.clusterIP = spec.clusterIPs[0];
  if (old?.clusterIP && old.type !== 'ExternalName') {
    if (!spec.clusterIP && spec.type !== 'ExternalName') spec.clusterIP = old.clusterIP;
    else if (spec.type === 'ExternalName' && spec.clusterIP === old.clusterIP) delete spec.clusterIP;
  }
  if (spec.clusterIP) spec.clusterIPs = [spec.clusterIP];
  else delete spec.clusterIPs;
  const external = (o: ServiceSpec | undefined) => usesNodePorts(o) || (o?.externalIPs ?? []).length > 0;
  if (external(spec)) spec.externalTrafficPolicy ??= 'Cluster';
  else if (external(old) && spec.externalTrafficPolicy === old!.externalTrafficPolicy) delete spec.externalTrafficPolicy;
  if (needsHealthCheck(old) && old!.healthCheckNodePort) {
    if (needsHealthCheck(spec) && !spec.healthCheckNodePort) spec.healthCheckNodePort = old!.healthCheckNodePort;
    else if (!needsHealthCheck(spec) && spec.healthCheckNodePort === old!.healthCheckNodePort) delete spec.healthCheckNodePort;
  }
  for (const port of Array.isArray(spec.ports) ? spec.ports : []) {
    if (typeof port !== 'object' || port === null) continue;
    port.protocol ??= 'TCP';
    port.targetPort ??= port.port;
    const oldPort = usesNodePorts(old) ? (old!.ports ?? []).find((p) => p?.port === port.port && p.nodePort) : undefined;
    if (usesNodePorts(spec) && !port.nodePort && oldPort) port.nodePort = oldPort.nodePort;
    else if (!usesNodePorts(spec) && oldPort && port.nodePort === oldPort.nodePort) delete port.nodePort;
  }
}

function validate(o: api.Service, previous: api.Service | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const ports: unknown = o.spec?.ports ?? [];
  if (!Array.isArray(ports)) return [{ type: 'FieldValueInvalid', field: 'spec.ports', message: 'Invalid value: must be a list of ports' }];
  (ports as Array<api.ServicePort | null | undefined>).forEach((p, i) => {
    if (!Number.isInteger(p?.port) || p!.port < 1 || p!.port > 65535) problems.push({ type: 'FieldValueInvalid', field: `spec.ports[${i}].port`, message: `Invalid value: ${JSON.stringify(p?.port)}: must be between 1 and 65535, inclusive` });
    if (p?.nodePort && !usesNodePorts(o.spec)) problems.push({ type: 'FieldValueForbidden', field: `spec.ports[${i}].nodePort`, message: `Forbidden: may not be used when \`type\` is '${o.spec?.type}'` });
  });
  const policy = o.spec?.externalTrafficPolicy;
  if (policy !== undefined && policy !== 'Cluster' && policy !== 'Local') {
    problems.push({ type: 'FieldValueNotSupported', field: 'spec.externalTrafficPolicy', message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Cluster", "Local"` });
  } else if (policy !== undefined && !usesNodePorts(o.spec) && !(Array.isArray(o.spec?.externalIPs) && o.spec.externalIPs.length)) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.externalTrafficPolicy', message: `Invalid value: ${JSON.stringify(policy)}: may only be set for externally-accessible services` });
  }
  const healthCheck = o.spec?.healthCheckNodePort;
  if (healthCheck !== undefined && healthCheck !== 0) {
    if (!needsHealthCheck(o.spec)) problems.push({ type: 'FieldValueInvalid', field: 'spec.healthCheckNodePort', message: `Invalid value: ${JSON.stringify(healthCheck)}: may only be set when \`type\` is 'LoadBalancer' and \`externalTrafficPolicy\` is 'Local'` });
    else if ((ports as Array<api.ServicePort | null | undefined>).some((p) => p?.nodePort === healthCheck)) problems.push({ type: 'FieldValueDuplicate', field: 'spec.healthCheckNodePort', message: `Duplicate value: ${JSON.stringify(healthCheck)}` });
  }
  const internal = o.spec?.internalTrafficPolicy;
  if (internal !== undefined && internal !== 'Cluster' && internal !== 'Local') {
    problems.push({ type: 'FieldValueNotSupported', field: 'spec.internalTrafficPolicy', message: `Unsupported value: ${JSON.stringify(internal)}: supported values: "Cluster", "Local"` });
  }
  const familyPolicy = o.spec?.ipFamilyPolicy;
  if (familyPolicy !== undefined && !['SingleStack', 'PreferDualStack', 'RequireDualStack'].includes(familyPolicy)) {
    problems.push({ type: 'FieldValueNotSupported', field: 'spec.ipFamilyPolicy', message: `Unsupported value: ${JSON.stringify(familyPolicy)}: supported values: "PreferDualStack", "RequireDualStack", "SingleStack"` });
  } else if (familyPolicy === 'RequireDualStack' && !(o.spec?.clusterIP === 'None' && Object.keys(o.spec?.selector ?? {}).length === 0)) {
    // (A headless Service without a selector may ask for every family the cluster has, as kube lets it.)
    problems.push({ type: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', message: 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services' });
  }
  const families: unknown = o.spec?.ipFamilies;
  if (families !== undefined && !Array.isArray(families)) problems.push({ type: 'FieldValueInvalid', field: 'spec.ipFamilies', message: `Invalid value: ${JSON.stringify(families)}: must be a list of IP families` });
  else (families ?? []).forEach((family: unknown, i: number) => {
    if (family === 'IPv6') problems.push({ type: 'FieldValueInvalid', field: `spec.ipFamilies[${i}]`, message: 'Invalid value: "IPv6": not configured on this cluster' });
    else if (family !== 'IPv4') problems.push({ type: 'FieldValueNotSupported', field: `spec.ipFamilies[${i}]`, message: `Unsupported value: ${JSON.stringify(family)}: supported values: "IPv4", "IPv6"` });
  });
  const ip = o.spec?.clusterIP;
  if (ip !== undefined && ip !== '' && ip !== 'None' && !(typeof ip === 'string' && IPV4.test(ip))) {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: ${JSON.stringify(ip)}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)` });
  }
  const before = previous?.spec;
  if (before?.clusterIP && ip && ip !== before.clusterIP && before.type !== 'ExternalName' && o.spec?.type !== 'ExternalName') {
    problems.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: ${JSON.stringify(ip)}: may not change once set` });
  }
  return problems;
}

function servicePorts(o: api.Service): string {
  const ports = (o.spec?.ports ?? []).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`);
  return ports.length ? ports.join(',') : '<none>';
}

function externalIP(o: api.Service): string {
  if (o.spec?.type === 'ExternalName') return orNone(o.spec?.externalName);
  const ingress = (o.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname);
  const ips = [...(o.spec?.externalIPs ?? []), ...ingress];
  if (ips.length) return ips.join(',');
  return o.spec?.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

export const services: KindStrategy<api.Service> = {
  type: builtinType('', 'v1', 'services', 'Service', { shortNames: ['svc'], categories: ALL, status: true, fieldSelectors: ['spec.clusterIP', 'spec.type'] }),
  names: 'label',
  defaults,
  validate,
  allocations: serviceAllocations,
  printer: {
    columns: [NAME_COLUMN, column('Type'), column('Cluster-IP'), column('External-IP'), column('Port(s)'), AGE_COLUMN, column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.spec?.type ?? 'ClusterIP', orNone(o.spec?.clusterIP), externalIP(o), servicePorts(o), ageCell(o, now), selectorString(o.spec?.selector)],
  },
};
