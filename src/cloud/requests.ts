// Validation of what clients send the local cloud, before anything is written: each function
// returns a typed request or throws one CloudError naming every problem (the first problem's
// code classifies it: InvalidInstanceType, InvalidZone, InvalidUserData, InvalidParameter, …).
import { parseConfig, IgnitionConfigError } from '../ignition/parse.js';
import { DEFAULT_INSTANCE_TYPE, INSTANCE_TYPES, INTERNAL_LOAD_BALANCER_ADDRESS_PREFIX, LOAD_BALANCER_ADDRESS_PREFIX, ZONES, instanceType } from './catalogue.js';
import { invalid } from './errors.js';
import type { LoadBalancerHealthCheck, LoadBalancerPort } from './types.js';
import { parseCidr } from '../common/ipv4.js';
import { isDnsSubdomain } from '../common/dns-names.js';

/** EC2's user-data limit is 16 KiB; pointer configs with a CA are a few KiB, full configs more. */
export const MAX_USER_DATA_BYTES = 64 * 1024;

export interface CreateInstanceRequest { name: string; type: string; zone?: string; userData?: string }
export interface LoadBalancerRequest { name: string; ports: LoadBalancerPort[]; targets: string[]; sourceRanges: string[]; address?: string; internal?: boolean; healthCheck?: LoadBalancerHealthCheck }

/** A listener target given by address rather than instance: a loopback IPv4 address. */
export function isAddressTarget(target: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(target) && target.split('.').every((x) => Number(x) <= 255);
}

/** A target's address: itself when given by address, else its instance's (undefined once the instance is gone). */
export function targetAddress(target: string, resolve: (instance: string) => string | undefined): string | undefined {
  return isAddressTarget(target) ? target : resolve(target);
}

/** The health check a balancer port's targets get: the balancer's, unless the port lists its own targets (used as they are). */
export function portHealthCheck<H>(lb: { healthCheck?: H }, port: { targets?: string[] }): H | undefined {
  return port.targets !== undefined ? undefined : lb.healthCheck;
}
export interface RouteRequest { name: string; destinationCidr: string; targetInstance: string }

interface Problem { code: string; message: string }

class Problems {
  readonly list: Problem[] = [];
  add(code: string, message: string): void { this.list.push({ code, message }); }
  throwIfAny(what: string): void {
    if (this.list.length === 0) return;
    throw invalid(this.list[0].code, `invalid ${what}: ${this.list.map((p) => p.message).join('; ')}`);
  }
}


function body(input: unknown, what: string, fields: string[], p: Problems): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw invalid('InvalidParameter', `invalid ${what}: the body must be a JSON object`);
  const o = input as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!fields.includes(k)) p.add('UnknownParameter', `unknown field "${k}" (known: ${fields.join(', ')})`);
  return o;
}

function checkName(v: unknown, p: Problems): string {
  if (typeof v !== 'string' || v === '') { p.add('MissingParameter', 'name is required'); return ''; }
  if (!isDnsSubdomain(v)) p.add('InvalidParameter', `name "${v}" must be a DNS subdomain: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters`);
  return v;
}

function optionalString(o: Record<string, unknown>, field: string, p: Problems): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') { p.add('InvalidParameter', `${field} must be a string`); return undefined; }
  return v;
}

/** An instance to create. userData must be an Ignition 3.x config, validated as Ignition would. */
export function parseCreateInstance(input: unknown): CreateInstanceRequest {
  const p = new Problems();
  const o = body(input, 'instance request', ['name', 'type', 'zone', 'userData'], p);
  const name = checkName(o.name, p);
  const type = optionalString(o, 'type', p) ?? DEFAULT_INSTANCE_TYPE;
  if (!instanceType(type)) p.add('InvalidInstanceType', `instance type "${type}" does not exist (types: ${INSTANCE_TYPES.map((t) => t.name).join(', ')})`);
  const zone = optionalString(o, 'zone', p);
  if (zone !== undefined && !(ZONES as readonly string[]).includes(zone)) p.add('InvalidZone', `zone "${zone}" does not exist in region local (zones: ${ZONES.join(', ')})`);
  const userData = optionalString(o, 'userData', p) || undefined;
  if (userData !== undefined) {
    const size = Buffer.byteLength(userData);
    if (size > MAX_USER_DATA_BYTES) p.add('InvalidUserData', `userData is ${size} bytes; at most ${MAX_USER_DATA_BYTES} are allowed`);
    else {
      try { parseConfig(userData); } catch (e) {
        if (!(e instanceof IgnitionConfigError)) throw e;
        p.add('InvalidUserData', `userData is not a valid Ignition config: ${e.problems.map((x) => (x.path ? `${x.path}: ${x.message}` : x.message)).join('; ')}`);
      }
    }
  }
  p.throwIfAny('instance request');
  return { name, type, ...(zone ? { zone } : {}), ...(userData ? { userData } : {}) };
}

function isPort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535;
}

/** A load balancer to create or replace (ensure) by name. */
export function parseLoadBalancer(input: unknown, name: string): LoadBalancerRequest {
  const p = new Problems();
  const o = body(input, 'load balancer request', ['name', 'ports', 'targets', 'sourceRanges', 'address', 'internal', 'healthCheck'], p);
  if (o.internal !== undefined && typeof o.internal !== 'boolean') p.add('InvalidParameter', 'internal must be true or false');
  const internal = o.internal === true;
  const prefix = internal ? INTERNAL_LOAD_BALANCER_ADDRESS_PREFIX : LOAD_BALANCER_ADDRESS_PREFIX;
  if (o.name !== undefined && o.name !== name) p.add('InvalidParameter', `name "${String(o.name)}" in the body differs from "${name}" in the path`);
  checkName(name, p);
  const ports: LoadBalancerPort[] = [];
  if (!Array.isArray(o.ports) || o.ports.length === 0) p.add('MissingParameter', 'ports must be a non-empty list');
  else {
    const seen = new Set<number>();
    o.ports.forEach((x: unknown, i) => {
      const port = x as Record<string, unknown> | null;
      if (!port || typeof port !== 'object') { p.add('InvalidParameter', `ports[${i}] must be an object`); return; }
      const protocol = port.protocol ?? 'TCP';
      if (protocol !== 'TCP') p.add('InvalidParameter', `ports[${i}].protocol "${String(protocol)}" is not supported (only TCP)`);
      if (!isPort(port.port)) p.add('InvalidParameter', `ports[${i}].port must be an integer from 1 to 65535`);
      else if (seen.has(port.port)) p.add('InvalidParameter', `ports[${i}].port ${port.port} is listed twice`);
      else seen.add(port.port);
      if (!isPort(port.targetPort)) p.add('InvalidParameter', `ports[${i}].targetPort must be an integer from 1 to 65535`);
      if (port.name !== undefined && typeof port.name !== 'string') p.add('InvalidParameter', `ports[${i}].name must be a string`);
      const own = port.targets === undefined ? undefined : stringList(port.targets, `ports[${i}].targets`, p);
      if (own?.length === 0) p.add('InvalidParameter', `ports[${i}].targets must not be empty when given (leave it out to use the balancer's targets)`);
      if (isPort(port.port) && isPort(port.targetPort)) ports.push({ ...(typeof port.name === 'string' ? { name: port.name } : {}), protocol: 'TCP', port: port.port, targetPort: port.targetPort, ...(own?.length ? { targets: own } : {}) });
    });
  }
  const targets = stringList(o.targets, 'targets', p);
  const sourceRanges = stringList(o.sourceRanges, 'sourceRanges', p);
  sourceRanges.forEach((r, i) => { if (!parseCidr(r)) p.add('InvalidParameter', `sourceRanges[${i}] "${r}" is not an IPv4 CIDR such as 10.0.0.0/8`); });
  const address = optionalString(o, 'address', p);
  if (address !== undefined && !new RegExp(`^${prefix.replace(/\./g, '\\.')}(\\d{1,3})$`).test(address)) p.add('InvalidParameter', `address "${address}" is not in ${prefix}0/24${internal ? ' (internal balancers)' : ''}`);
  else if (address !== undefined) {
    const last = Number(address.split('.')[3]);
    if (last < 1 || last > 254) p.add('InvalidParameter', `address "${address}" is not a host address of ${prefix}0/24`);
  }
  const healthCheck = parseHealthCheck(o.healthCheck, p);
  p.throwIfAny('load balancer request');
  return { name, ports, targets, sourceRanges, ...(address ? { address } : {}), ...(internal ? { internal } : {}), ...(healthCheck ? { healthCheck } : {}) };
}

/** `healthCheck: {port, path, protocol}` (path defaults to /healthz, kube-proxy's; protocol to HTTP), or absent. */
function parseHealthCheck(v: unknown, p: Problems): LoadBalancerHealthCheck | undefined {
  if (v === undefined || v === null) return undefined;
  const check = v as Record<string, unknown>;
  if (typeof v !== 'object' || Array.isArray(v)) { p.add('InvalidParameter', 'healthCheck must be an object {port, path, protocol}'); return undefined; }
  for (const key of Object.keys(check)) if (key !== 'port' && key !== 'path' && key !== 'protocol') p.add('InvalidParameter', `healthCheck.${key} is not a known field (port, path, protocol)`);
  if (!isPort(check.port)) p.add('InvalidParameter', 'healthCheck.port must be an integer from 1 to 65535');
  const path = check.path ?? '/healthz';
  if (typeof path !== 'string' || !path.startsWith('/')) p.add('InvalidParameter', 'healthCheck.path must be a path starting with /');
  const protocol = check.protocol ?? 'HTTP';
  if (protocol !== 'HTTP' && protocol !== 'HTTPS') p.add('InvalidParameter', 'healthCheck.protocol must be HTTP or HTTPS');
  if (!isPort(check.port) || typeof path !== 'string' || !path.startsWith('/') || (protocol !== 'HTTP' && protocol !== 'HTTPS')) return undefined;
  return { port: check.port, path, ...(protocol === 'HTTPS' ? { protocol } : {}) };
}

function stringList(v: unknown, field: string, p: Problems): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) { p.add('InvalidParameter', `${field} must be a list of strings`); return []; }
  return v as string[];
}

/** A route: a pod CIDR to an instance. */
export function parseRoute(input: unknown): RouteRequest {
  const p = new Problems();
  const o = body(input, 'route request', ['name', 'destinationCidr', 'targetInstance'], p);
  const name = checkName(o.name, p);
  const destinationCidr = optionalString(o, 'destinationCidr', p);
  if (destinationCidr === undefined) p.add('MissingParameter', 'destinationCidr is required');
  else if (!parseCidr(destinationCidr)) p.add('InvalidParameter', `destinationCidr "${destinationCidr}" is not an IPv4 network such as 127.1.3.0/24`);
  const targetInstance = optionalString(o, 'targetInstance', p);
  if (targetInstance === undefined) p.add('MissingParameter', 'targetInstance is required');
  p.throwIfAny('route request');
  return { name, destinationCidr: destinationCidr!, targetInstance: targetInstance! };
}
