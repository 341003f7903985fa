// A strict checker for the subset of OpenAPI v3 that CRD structural schemas use (type,
// properties, required, items, enum, nullable, pattern, min/max lengths and items, date-time,
// x-kubernetes-preserve-unknown-fields), for checking real OpenShift objects against bosun's
// CRDs in tests. Unlike the API server it reports unknown fields instead of pruning them, so a
// field missing from a schema shows up. (The embedded API server's own validator replaces this
// once it exists.)
type Schema = Record<string, any>;

export function validateAgainstSchema(value: unknown, schema: Schema, path = ''): string[] {
  const at = path || '<root>';
  if (value === null) return schema.nullable ? [] : [`${at}: null is not allowed`];
  const errors: string[] = [];
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return [`${at}: expected an object`];
      const o = value as Record<string, unknown>;
      for (const r of schema.required ?? []) if (!(r in o)) errors.push(`${at}: ${r} is required`);
      for (const [k, v] of Object.entries(o)) {
        const sub = schema.properties?.[k];
        if (sub) errors.push(...validateAgainstSchema(v, sub, `${path}.${k}`));
        else if (schema.additionalProperties) errors.push(...validateAgainstSchema(v, schema.additionalProperties, `${path}.${k}`));
        else if (!schema['x-kubernetes-preserve-unknown-fields'] && !(path === '' && k === 'metadata') && schema.properties) errors.push(`${path}.${k}: unknown field`);
      }
      return errors;
    }
    case 'array': {
      if (!Array.isArray(value)) return [`${at}: expected an array`];
      if (schema.minItems !== undefined && value.length < schema.minItems) errors.push(`${at}: fewer than ${schema.minItems} items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) errors.push(`${at}: more than ${schema.maxItems} items`);
      value.forEach((v, i) => errors.push(...validateAgainstSchema(v, schema.items ?? {}, `${path}[${i}]`)));
      return errors;
    }
    case 'string':
      if (typeof value !== 'string') return [`${at}: expected a string`];
      if (schema.enum && !schema.enum.includes(value)) errors.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`);
      if (schema.pattern && !new RegExp(schema.pattern).test(value)) errors.push(`${at}: does not match ${schema.pattern}`);
      if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${at}: shorter than ${schema.minLength}`);
      if (schema.maxLength !== undefined && value.length > schema.maxLength) errors.push(`${at}: longer than ${schema.maxLength}`);
      if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errors.push(`${at}: not a date-time`);
      return errors;
    case 'integer':
      return Number.isInteger(value) ? [] : [`${at}: expected an integer`];
    case 'number':
      return typeof value === 'number' ? [] : [`${at}: expected a number`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at}: expected a boolean`];
    default:
      return [];
  }
}
