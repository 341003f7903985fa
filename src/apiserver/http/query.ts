// Query parameters as kube-apiserver decodes them: booleans as Go's strconv.ParseBool reads them
// (the official Python client sends `watch=True`), integers as base-10 numbers, and any value
// that does not parse refused with a 400 naming the parameter. Every parameter the server reads
// goes through here, so that there is one rule for each kind of value.
import { errors } from '../errors.js';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** strconv.ParseBool: true, false, or undefined when the text is none of its spellings. */
export function parseBool(text: string): boolean | undefined {
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  return undefined;
}

export class QueryParams {
  private readonly params: URLSearchParams;

  constructor(search: string) {
    this.params = new URLSearchParams(search);
  }

  static fromUrl(url: string): QueryParams {
    const at = url.indexOf('?');
    return new QueryParams(at < 0 ? '' : url.slice(at + 1));
  }

  /** The first value of a parameter, or undefined when it is absent. */
  string(name: string): string | undefined {
    return this.params.get(name) ?? undefined;
  }

  /** A boolean parameter; absent or empty → `fallback`. */
  bool(name: string, fallback = false): boolean {
    const text = this.params.get(name);
    if (text === null || text === '') return fallback;
    const value = parseBool(text);
    if (value === undefined) throw errors.badRequest(`invalid value for query parameter "${name}": strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
    return value;
  }

  /** A boolean parameter that may be absent (undefined), as `force` on apply. */
  optionalBool(name: string): boolean | undefined {
    return this.params.has(name) && this.params.get(name) !== '' ? this.bool(name) : undefined;
  }

  /** A signed integer parameter (DeleteOptions' gracePeriodSeconds), or undefined when absent or empty. */
  integer(name: string): number | undefined {
    const text = this.params.get(name);
    if (text === null || text === '') return undefined;
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw errors.badRequest(`invalid value for query parameter "${name}": ${JSON.stringify(text)} is not an integer`);
    return Number(text);
  }

  /** A non-negative integer parameter, or undefined when absent or empty. */
  count(name: string): number | undefined {
    const text = this.params.get(name);
    if (text === null || text === '') return undefined;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw errors.badRequest(`invalid value for query parameter "${name}": ${JSON.stringify(text)} is not a non-negative integer`);
    return Number(text);
  }
}
