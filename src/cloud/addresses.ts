// Address allocation for the local cloud, from what is stored: an instance holds its 127.0.1.N
// from creation until it is terminated; a load balancer holds its 127.0.200.M until deleted.
// Nothing held is handed out twice.
import { randomBytes } from 'node:crypto';
import { conflict } from './errors.js';

/** The first free `prefix` + N (1–254) not in `held`, looking from `start` (default 1) and
 *  wrapping around; 409 when the /24 is full. */
export function allocateAddress(prefix: string, held: Iterable<string>, what: string, start = 1): string {
  const taken = new Set(held);
  for (let i = 0; i < 254; i++) {
    const candidate = `${prefix}${((start - 1 + i) % 254) + 1}`;
    if (!taken.has(candidate)) return candidate;
  }
  throw conflict('AddressLimitExceeded', `no free address left for ${what} in ${prefix}0/24 (254 in use)`);
}

/** `i-` followed by 17 hex digits, as EC2's long instance IDs. */
export function newInstanceId(): string {
  return `i-${randomBytes(9).toString('hex').slice(0, 17)}`;
}
