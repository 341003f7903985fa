// How deep client data may nest, and how deep a value nests, measured without recursion. Bodies
// are checked when decoded (body.ts) and JSON patches on their result (apply/patch.ts), so that no
// object the server stores or walks is deeper than this.

/**
 * The deepest nesting of objects and arrays a body may have. kube's JSON decoder allows 10,000;
 * ours is lower because the YAML parser and our walks over objects (schema validation, merges,
 * managed fields) recurse, and a recursion near V8's stack limit can end the process instead of
 * throwing (a regular expression compiled there fails with "RegExpCompiler Allocation failed").
 * The YAML parser runs out of stack at about 450 levels of a sequence of maps; real objects stay
 * far below this.
 */
export const MAX_DEPTH = 300;

/**
 * The deepest a stored object may become through a JSON patch: the managedFields of an object
 * MAX_DEPTH levels deep mirror it four levels lower (metadata, managedFields, entry, fieldsV1),
 * so an object accepted at the limit stays patchable, while repeated patches cannot grow it.
 */
export const MAX_PATCHED_DEPTH = MAX_DEPTH + 8;

/**
 * The nesting depth of a decoded value, walked with an explicit stack (never recursion); the walk
 * stops as soon as the depth passes `limit`.
 */
export function valueNestingDepth(value: unknown, limit = MAX_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

