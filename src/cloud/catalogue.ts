// What the local cloud offers: its region, zones and instance types. One table, so the API's
// validation, the CLI's help and (later) the node agent's capacity read the same facts.

export const REGION = 'local';
export const ZONES = ['local-a', 'local-b', 'local-c'] as const;

export interface InstanceType {
  name: string;
  cpu: number;
  /** Memory in MiB. */
  memoryMiB: number;
}

/** Sizes in the shape of a cloud's general-purpose family: each doubles the one before. */
export const INSTANCE_TYPES: readonly InstanceType[] = [
  { name: 'local.small', cpu: 2, memoryMiB: 4096 },
  { name: 'local.medium', cpu: 4, memoryMiB: 8192 },
  { name: 'local.large', cpu: 8, memoryMiB: 16384 },
  { name: 'local.xlarge', cpu: 16, memoryMiB: 32768 },
];

export const DEFAULT_INSTANCE_TYPE = 'local.medium';

export function instanceType(name: string): InstanceType | undefined {
  return INSTANCE_TYPES.find((t) => t.name === name);
}

/** Node addresses: 127.0.1.N (local-cluster.md); Linux routes all of 127/8 to loopback. */
export const INSTANCE_ADDRESS_PREFIX = '127.0.1.';
/** Load balancer virtual IPs: 127.0.200.M. */
export const LOAD_BALANCER_ADDRESS_PREFIX = '127.0.200.';
/** Internal load balancers' virtual IPs (the install's api-int is 127.0.100.1): 127.0.100.M. */
export const INTERNAL_LOAD_BALANCER_ADDRESS_PREFIX = '127.0.100.';
