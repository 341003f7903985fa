// The size limit kube-apiserver puts on what ConfigMaps and Secrets carry: their keys and values
// together may not exceed 1 MiB (core.MaxSecretSize), checked on every create and update (patches
// included) as the kinds' validation does, so a write over it is a 422 "Too long".
// Attached to the object semantics as a write hook; the per-kind strategies may take it over.
import { errors } from '../errors.js';
import type { ResourceHooks } from '../registry/write-context.js';

/** 1 MiB, as core.MaxSecretSize. */
export const MAX_DATA_SIZE = 1024 * 1024;

function entriesSize(map: unknown, valueSize: (value: string) => number): number {
  if (map === null || typeof map !== 'object') return 0;
  let size = 0;
  for (const [key, value] of Object.entries(map)) size += Buffer.byteLength(key) + (typeof value === 'string' ? valueSize(value) : 0);
  return size;
}

const text = (value: string) => Buffer.byteLength(value);
const base64 = (value: string) => Buffer.from(value, 'base64').length;

/** The bytes a ConfigMap or Secret carries, as kube counts them (keys plus decoded values). */
export function dataSize(kind: 'ConfigMap' | 'Secret', object: { metadata: object; data?: unknown; binaryData?: unknown; stringData?: unknown }): number {
  if (kind === 'ConfigMap') return entriesSize(object.data, text) + entriesSize(object.binaryData, base64);
  return entriesSize(object.data, base64) + entriesSize(object.stringData, text);
}

export function objectSizeHooks(): ResourceHooks {
  return {
    beforeWrite(type, object) {
      if (!type.builtin || type.group !== '' || (type.kind !== 'ConfigMap' && type.kind !== 'Secret')) return;
      if (dataSize(type.kind, object) <= MAX_DATA_SIZE) return;
      const field = type.kind === 'Secret' ? 'data' : '[]';
      throw errors.invalid(type.kind, '', object.metadata?.name ?? '', [
        { type: 'FieldValueTooLong', field, message: `Too long: may not be more than ${MAX_DATA_SIZE} bytes` },
      ]);
    },
  };
}
