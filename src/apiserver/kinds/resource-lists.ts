// ResourceLists (a resource name → a quantity: a quota's `hard`, a LimitRange's `max`) as kinds
// validate them: each value a non-negative Kubernetes quantity, read in thousandths.
import { quantityMilli } from '../../kube/quantity.js';
import type { FieldProblem } from '../errors.js';

/** The amounts of a ResourceList, and a problem at `field[name]` for each value that is not a non-negative quantity. */
export function readResourceList(list: unknown, field: string): { amounts: Map<string, bigint>; problems: FieldProblem[] } {
  const amounts = new Map<string, bigint>();
  const problems: FieldProblem[] = [];
  if (list === undefined || list === null) return { amounts, problems };
  if (typeof list !== 'object' || Array.isArray(list)) return { amounts, problems: [{ type: 'FieldValueInvalid', field, message: 'Invalid value: must be a map of resource names to quantities' }] };
  for (const [name, value] of Object.entries(list)) {
    let amount: bigint;
    try {
      amount = quantityMilli(value as string);
    } catch {
      problems.push({ type: 'FieldValueInvalid', field: `${field}[${name}]`, message: `Invalid value: ${JSON.stringify(value)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'` });
      continue;
    }
    if (amount < 0n) problems.push({ type: 'FieldValueInvalid', field: `${field}[${name}]`, message: `Invalid value: ${JSON.stringify(value)}: must be greater than or equal to 0` });
    else amounts.set(name, amount);
  }
  return { amounts, problems };
}
