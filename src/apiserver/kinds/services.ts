// Services (core/v1): type ClusterIP and port defaults, a cluster IP and node ports allocated to
// them, names that are DNS labels, valid port numbers, and the TYPE / CLUSTER-IP / EXTERNAL-IP /
// PORT(S) columns.
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, orNone, selectorString } from '../printing.js';
import { ALL, builtinType, type KindStrategy, type Obj } from './strategy.js';

let nextClusterIP = 1;
let nextNodePort = 30000;

function servicePorts(o: Obj): string {
  const ports = (o.spec?.ports ?? []).map((p: Obj) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`);
  return ports.length ? ports.join(',') : '<none>';
}

function externalIP(o: Obj): string {
  if (o.spec?.type === 'ExternalName') return orNone(o.spec?.externalName);
  const ingress = (o.status?.loadBalancer?.ingress ?? []).map((i: Obj) => i.ip ?? i.hostname);
  const ips = [...(o.spec?.externalIPs ?? []), ...ingress];
  if (ips.length) return ips.join(',');
  return o.spec?.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

export const services: KindStrategy = {
  type: builtinType('', 'v1', 'services', 'Service', { shortNames: ['svc'], categories: ALL, status: true }),
  names: 'label',
  defaults(object, previous) {
    const spec = (object.spec = { type: 'ClusterIP', sessionAffinity: 'None', ...(object.spec ?? {}) });
    if (!spec.clusterIP) {
      spec.clusterIP = previous?.spec?.clusterIP ?? `172.30.${Math.floor(nextClusterIP / 250) % 256}.${(nextClusterIP++ % 250) + 1}`;
      spec.clusterIPs = [spec.clusterIP];
    }
    for (const port of spec.ports ?? []) {
      port.protocol ??= 'TCP';
      port.targetPort ??= port.port;
      if ((spec.type === 'NodePort' || spec.type === 'LoadBalancer') && !port.nodePort) {
        const old = (previous?.spec?.ports ?? []).find((p: Obj) => p.port === port.port && p.nodePort);
        port.nodePort = old?.nodePort ?? 30000 + (nextNodePort++ % 2768);
      }
    }
  },
  validate: (o) =>
    ((o.spec?.ports ?? []) as Obj[]).flatMap((p, i) =>
      !Number.isInteger(p?.port) || p.port < 1 || p.port > 65535 ? [{ type: 'FieldValueInvalid', field: `spec.ports[${i}].port`, message: `Invalid value: ${JSON.stringify(p?.port)}: must be between 1 and 65535, inclusive` }] : [],
    ),
  printer: {
    columns: [NAME_COLUMN, column('Type'), column('Cluster-IP'), column('External-IP'), column('Port(s)'), AGE_COLUMN, column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.spec?.type ?? 'ClusterIP', orNone(o.spec?.clusterIP), externalIP(o), servicePorts(o), ageCell(o, now), selectorString(o.spec?.selector)],
  },
};
