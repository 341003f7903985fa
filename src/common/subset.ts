// Whether a live object already says what a manifest says: the comparison behind every apply
// that writes only when something differs. Objects match key by key (keys the manifest does not
// set are someone else's), lists item by item with the same length (so fields the API server
// defaults inside list items are not differences), scalars by equality.
//
// What a null in the manifest means differs by caller, so each names it:
// - `nullMeans: 'unset'`: the manifest does not set the field and anything there matches — as
//   `creationTimestamp: null` in generated YAML, and as the CVO's resource merge reads manifests;
// - `nullMeans: 'absent'`: the field must not be there — as a JSON merge patch deletes a field
//   given null, which is how the toolkit's applyObject writes the difference.

import { isPlainObject } from './json.js';

export interface SubsetOptions {
  nullMeans: 'unset' | 'absent';
}

/** True when everything `desired` sets is so in `live` (see the header for null). */
export function isSubset(desired: unknown, live: unknown, options: SubsetOptions): boolean {
  if (desired === null || desired === undefined) return options.nullMeans === 'unset' || live === null || live === undefined;
  if (Array.isArray(desired)) {
    return Array.isArray(live) && live.length === desired.length && desired.every((d, i) => isSubset(d, live[i], options));
  }
  if (isPlainObject(desired)) {
    return isPlainObject(live) && Object.entries(desired).every(([k, d]) => isSubset(d, live[k], options));
  }
  return desired === live;
}
