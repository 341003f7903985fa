// IPv4 addresses and networks as numbers: parsing `a.b.c.d` and `a.b.c.d/n`, and the Nth address
// of a network. Shared by the API server's service network, the MCO's cluster DNS address and the
// local cloud's routes and source ranges.

/** The service network OpenShift uses by default (install-config's serviceNetwork). */
export const DEFAULT_SERVICE_CIDR = '172.30.0.0/16';

/** `a.b.c.d` as a 32-bit unsigned number; undefined when it is not one. */
export function ipToNumber(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((x) => x > 255)) return undefined;
  return octets.reduce((a, x) => a * 256 + x, 0);
}

export const numberToIp = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** `a.b.c.d/n` with a network address (no host bits set), as Kubernetes' CIDRs are. */
export function parseCidr(text: string): { base: number; bits: number } | undefined {
  const m = /^(.+)\/(\d{1,2})$/.exec(text);
  if (!m) return undefined;
  const base = ipToNumber(m[1]);
  const bits = Number(m[2]);
  if (base === undefined || bits > 32) return undefined;
  if (base % 2 ** (32 - bits) !== 0) return undefined;
  return { base, bits };
}

/** Whether two networks share an address (one holds the other, as networks are aligned). */
export function cidrsOverlap(a: { base: number; bits: number }, b: { base: number; bits: number }): boolean {
  const size = 2 ** (32 - Math.min(a.bits, b.bits));
  return Math.floor(a.base / size) === Math.floor(b.base / size);
}

/** The `n`th address of a network (1: the first after the network address). */
export function nthAddress(cidr: string, n: number): string {
  const parsed = parseCidr(cidr);
  if (!parsed) throw new Error(`"${cidr}" is not an IPv4 network such as 172.30.0.0/16`);
  if (n >= 2 ** (32 - parsed.bits)) throw new Error(`${cidr} has no address number ${n}`);
  return numberToIp(parsed.base + n);
}
