// Label and field selectors as kube-apiserver parses and matches them: the string forms of
// `?labelSelector=` and `?fieldSelector=`, and metav1.LabelSelector objects (matchLabels +
// matchExpressions) used by Deployments, PDBs, MachineConfigPools and friends. Shared by the API
// server and the components that select objects (as apimachinery's labels package is), so that
// neither side imports the other for it.

import { BosunError } from './errors.js';
import { isDnsSubdomain } from './dns-names.js';
export class SelectorError extends BosunError {
  constructor(message: string) {
    super('SelectorInvalid', message);
  }
}

export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

/** A parsed label selector: every requirement must hold (AND). Empty matches everything. */
export type LabelSelector = LabelRequirement[];

/** Selects nothing: what a null metav1.LabelSelector means. */
export const MATCH_NOTHING: LabelSelector = [{ key: '', operator: 'In', values: [] }];

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Checks a label key (optional DNS-subdomain prefix + "/" + name); returns a problem or undefined. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || !isDnsSubdomain(prefix))) {
    return `prefix part of "${key}" must be a DNS subdomain (lowercase alphanumerics, '-' and '.', at most 253 characters)`;
  }
  if (name.length === 0 || name.length > 63 || !NAME_PART.test(name)) {
    return `name part of "${key}" must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`;
  }
  return undefined;
}

/** Checks a label value; returns a problem or undefined. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    return `invalid label value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`;
  }
  return undefined;
}

function requirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const keyProblem = labelKeyProblem(key);
  if (keyProblem) throw new SelectorError(`unable to parse requirement: ${keyProblem}`);
  for (const value of values) {
    const valueProblem = labelValueProblem(value);
    if (valueProblem) throw new SelectorError(`unable to parse requirement: ${valueProblem}`);
  }
  return { key, operator, values };
}

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(input: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of input) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) throw new SelectorError(`unable to parse requirement: unbalanced parentheses in "${input}"`);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (depth !== 0) throw new SelectorError(`unable to parse requirement: unbalanced parentheses in "${input}"`);
  parts.push(current);
  return parts;
}

/** Parses the string form of a label selector (`a=b,c!=d,e in (f,g),!h`). */
export function parseLabelSelector(input: string): LabelSelector {
  const text = input.trim();
  if (text === '') return [];
  return splitTopLevel(text).map((raw) => {
    const part = raw.trim();
    if (part === '') throw new SelectorError(`unable to parse requirement: empty requirement in "${input}"`);
    const setMatch = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
    if (setMatch) {
      const values = setMatch[3].split(',').map((v) => v.trim());
      if (values.length === 1 && values[0] === '') throw new SelectorError(`unable to parse requirement: for 'in', 'notin' operators, values set can't be empty`);
      return requirement(setMatch[1], setMatch[2] === 'in' ? 'In' : 'NotIn', values);
    }
    if (part.startsWith('!')) {
      const key = part.slice(1).trim();
      if (/[=!\s]/.test(key)) throw new SelectorError(`unable to parse requirement: "${part}" is not a valid requirement`);
      return requirement(key, 'DoesNotExist', []);
    }
    const eq = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (eq) {
      if (/[\s=!(),]/.test(eq[3])) throw new SelectorError(`unable to parse requirement: invalid value in "${part}"`);
      return requirement(eq[1], eq[2] === '!=' ? 'NotEquals' : 'Equals', [eq[3]]);
    }
    if (/^[^=!\s(),]+$/.test(part)) return requirement(part, 'Exists', []);
    throw new SelectorError(`unable to parse requirement: "${part}" is not a valid label requirement`);
  });
}

/** Whether the labels satisfy every requirement of the selector. */
export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return selector.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.operator) {
      case 'Equals':
        return has && l[r.key] === r.values[0];
      case 'NotEquals':
        return !has || l[r.key] !== r.values[0];
      case 'In':
        return has && r.values.includes(l[r.key]);
      case 'NotIn':
        return !has || !r.values.includes(l[r.key]);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
    }
  });
}

export interface MetaLabelSelector {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] | null }> | null;
}

/**
 * Whether a stored metav1.LabelSelector object selects `labels` (a PDB's selector, a ClusterRole's
 * aggregation selectors): the object was admitted already, so there is no error to give — an
 * operator this does not know selects nothing. `null`/`undefined` selects nothing; `{}` everything.
 */
export function storedSelectorMatches(selector: MetaLabelSelector | null | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(labels, e.key);
    const inValues = present && (e.values ?? []).includes(labels[e.key]);
    const ok = e.operator === 'In' ? inValues
      : e.operator === 'NotIn' ? !inValues
        : e.operator === 'Exists' ? present
          : e.operator === 'DoesNotExist' ? !present : false;
    if (!ok) return false;
  }
  return true;
}

/**
 * Converts a metav1.LabelSelector object. `null`/`undefined` selects nothing (as for a PDB or a
 * pool without a selector); `{}` selects everything.
 */
export function fromLabelSelectorObject(selector: MetaLabelSelector | null | undefined): LabelSelector {
  if (selector === null || selector === undefined) return MATCH_NOTHING;
  const out: LabelSelector = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) out.push(requirement(key, 'Equals', [value]));
  for (const expr of selector.matchExpressions ?? []) {
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) throw new SelectorError(`${expr.operator} requires at least one value for key "${expr.key}"`);
        out.push(requirement(expr.key, expr.operator, values));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) throw new SelectorError(`${expr.operator} takes no values for key "${expr.key}"`);
        out.push(requirement(expr.key, expr.operator, []));
        break;
      default:
        throw new SelectorError(`"${expr.operator}" is not a valid label selector operator`);
    }
  }
  return out;
}

/** Renders a selector in its string form (for `kubectl get -o wide` selector columns and messages). */
export function formatLabelSelector(selector: LabelSelector): string {
  return selector
    .map((r) => {
      switch (r.operator) {
        case 'Equals':
          return `${r.key}=${r.values[0]}`;
        case 'NotEquals':
          return `${r.key}!=${r.values[0]}`;
        case 'In':
          return `${r.key} in (${r.values.join(',')})`;
        case 'NotIn':
          return `${r.key} notin (${r.values.join(',')})`;
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
      }
    })
    .join(',');
}

export interface FieldRequirement {
  field: string;
  operator: 'Equals' | 'NotEquals';
  value: string;
}

/** Splits a field selector into terms on commas that are not escaped with a backslash. */
function splitFieldTerms(text: string): string[] {
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + text[++i];
    } else if (ch === ',') {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms;
}

/** Undoes the escaping of `\\`, `\,`, `\=` and `\!` in a field selector value; bare ones are errors. */
function unescapeFieldValue(value: string, term: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '\\') {
      const next = value[i + 1];
      if (next === undefined || !'\\,=!'.includes(next)) throw new SelectorError(`invalid field selector: invalid escape sequence in '${term}'`);
      out += next;
      i++;
    } else if (ch === ',' || ch === '=' || ch === '!') {
      throw new SelectorError(`invalid field selector: unescaped '${ch}' in the value of '${term}'`);
    } else out += ch;
  }
  return out;
}

/**
 * Parses `?fieldSelector=`. `supported` is the set of field paths the resource allows; any other
 * field is an error naming it, as kube-apiserver answers with 400. Values may escape `,`, `=`,
 * `!` and `\\` with a backslash, as fields.EscapeValue produces.
 */
export function parseFieldSelector(input: string, supported: Iterable<string>): FieldRequirement[] {
  const allowed = new Set(supported);
  const text = input.trim();
  if (text === '') return [];
  return splitFieldTerms(text).map((raw) => {
    const part = raw.trim();
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw new SelectorError(`invalid selector: '${part}'; can't understand '${part}'`);
    const field = m[1].trim();
    if (!allowed.has(field)) throw new SelectorError(`field label not supported: ${field}`);
    return { field, operator: m[2] === '!=' ? 'NotEquals' : 'Equals', value: unescapeFieldValue(m[3].trim(), part) };
  });
}

/** Whether an object's field values (looked up by path) satisfy every requirement. */
export function matchesFields(requirements: FieldRequirement[], lookup: (field: string) => string | undefined): boolean {
  return requirements.every((r) => {
    const actual = lookup(r.field) ?? '';
    return r.operator === 'Equals' ? actual === r.value : actual !== r.value;
  });
}
