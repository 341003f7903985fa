// LimitRanges (v1): kube's defaults for Container items (a default limit from `max`, a default
// request from the default limit, else from `min`), its validation (the item types, quantities,
// min ≤ default request ≤ default ≤ max, ratios of at least 1, no defaults on Pod items), and
// kubectl's CREATED AT column. The API server's LimitRanger admission applies them to pods.
import type * as api from '../../api/index.js';
import { readResourceList } from './resource-lists.js';
import type { FieldProblem } from '../errors.js';
import { column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

type ResourceList = Record<string, string>;
type Item = api.LimitRangeItem;

const TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'];
const LISTS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

function itemProblems(item: Item, at: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!TYPES.includes(item.type)) {
    problems.push(item.type === undefined || (item.type as string) === ''
      ? { type: 'FieldValueRequired', field: `${at}.type`, message: 'Required value' }
      : { type: 'FieldValueNotSupported', field: `${at}.type`, message: `Unsupported value: ${JSON.stringify(item.type)}: supported values: "Container", "PersistentVolumeClaim", "Pod"` });
  }
  const read = (list: (typeof LISTS)[number]) => {
    const { amounts, problems: found } = readResourceList(item[list], `${at}.${list}`);
    problems.push(...found);
    return amounts;
  };
  const values = Object.fromEntries(LISTS.map((list) => [list, read(list)])) as Record<(typeof LISTS)[number], Map<string, bigint>>;
  if (item.type === 'Pod') {
    for (const list of ['default', 'defaultRequest'] as const) {
      if (Object.keys(item[list] ?? {}).length > 0) problems.push({ type: 'FieldValueForbidden', field: `${at}.${list}`, message: "Forbidden: may not be specified when `type` is 'Pod'" });
    }
  }
  const text = (list: (typeof LISTS)[number], name: string) => ((item[list] ?? {}) as ResourceList)[name];
  const order: [(typeof LISTS)[number], (typeof LISTS)[number], string, string][] = [
    ['min', 'max', 'min', 'max'],
    ['min', 'defaultRequest', 'min', 'default request'],
    ['defaultRequest', 'default', 'default request', 'default limit'],
    ['default', 'max', 'default', 'max'],
    ['defaultRequest', 'max', 'default request', 'max'],
  ];
  for (const [lower, upper, lowerWords, upperWords] of order) {
    for (const [name, low] of values[lower]) {
      const high = values[upper].get(name);
      if (high !== undefined && low > high) {
        problems.push({ type: 'FieldValueInvalid', field: `${at}.${lower}[${name}]`, message: `Invalid value: ${JSON.stringify(text(lower, name))}: ${lowerWords} value ${text(lower, name)} is greater than ${upperWords} value ${text(upper, name)}` });
      }
    }
  }
  for (const [name, ratio] of values.maxLimitRequestRatio) {
    if (ratio < 1000n) problems.push({ type: 'FieldValueInvalid', field: `${at}.maxLimitRequestRatio[${name}]`, message: `Invalid value: ${JSON.stringify(text('maxLimitRequestRatio', name))}: ratio ${text('maxLimitRequestRatio', name)} is less than 1` });
  }
  return problems;
}

export const limitranges: KindStrategy<api.LimitRange> = {
  type: builtinType('', 'v1', 'limitranges', 'LimitRange', { shortNames: ['limits'] }),
  defaults(object) {
    for (const item of (object.spec?.limits ?? []) as Item[]) {
      if (item?.type !== 'Container') continue;
      const defaults = (item.default ??= {});
      const requests = (item.defaultRequest ??= {});
      for (const [name, value] of Object.entries((item.max ?? {}) as ResourceList)) defaults[name] ??= value;
      for (const [name, value] of Object.entries(defaults)) requests[name] ??= value;
      for (const [name, value] of Object.entries((item.min ?? {}) as ResourceList)) requests[name] ??= value;
    }
  },
  validate: (o) => {
    const limits = o.spec?.limits;
    if (!Array.isArray(limits)) return [{ type: 'FieldValueRequired', field: 'spec.limits', message: 'Required value' }];
    return (limits as Item[]).flatMap((item, i) => itemProblems(item ?? ({} as Item), `spec.limits[${i}]`));
  },
  printer: {
    columns: [NAME_COLUMN, column('Created At', 'date')],
    cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
  },
};
