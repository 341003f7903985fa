// The subset of Kubernetes JSONPath that printer columns and field selectors use: fields
// (`.a.b`, `['a.b']`, `a\.b`), indexes (`[0]`, `[-1]`), wildcards and `[?(@.f == "v")]` filters,
// evaluated to the first match.

/** A JSON object, as a path step reads its fields. */
type JsonObject = Record<string, unknown>;

type Step = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'all' } | { kind: 'filter'; path: string[]; op: string; value: unknown };

/** A field name up to the next unescaped `.` or bracket; `\.` keeps a dot inside the name. */
const FIELD_NAME = /^(?:\\.|[^.[\]\\])+/;
const unescapeName = (name: string): string => name.replace(/\\(.)/g, '$1');

function parseJsonPath(expression: string): Step[] {
  let expr = expression.trim();
  if (expr.startsWith('{') && expr.endsWith('}')) expr = expr.slice(1, -1).trim();
  if (expr.startsWith('$')) expr = expr.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < expr.length) {
    const ch = expr[i];
    if (ch === '.') {
      i++;
      if (expr[i] === '*') {
        steps.push({ kind: 'all' });
        i++;
        continue;
      }
      const m = FIELD_NAME.exec(expr.slice(i));
      if (!m) continue;
      steps.push({ kind: 'field', name: unescapeName(m[0]) });
      i += m[0].length;
    } else if (ch === '[') {
      const end = expr.indexOf(']', i);
      if (end < 0) throw new Error(`unterminated [ in JSONPath "${expression}"`);
      const inner = expr.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else {
        const f = /^\?\(@((?:\.[^.=!<>\s]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\)$/.exec(inner);
        if (!f) throw new Error(`unsupported JSONPath filter "[${inner}]" in "${expression}"`);
        const literal = f[3] ?? f[4] ?? f[5];
        const value = f[3] !== undefined || f[4] !== undefined ? literal : literal === 'true' ? true : literal === 'false' ? false : Number.isNaN(Number(literal)) ? literal : Number(literal);
        steps.push({ kind: 'filter', path: f[1].slice(1).split('.'), op: f[2], value });
      }
    } else {
      const m = FIELD_NAME.exec(expr.slice(i));
      if (!m) throw new Error(`unexpected "${ch}" in JSONPath "${expression}"`);
      steps.push({ kind: 'field', name: unescapeName(m[0]) });
      i += m[0].length;
    }
  }
  return steps;
}

function evaluate(steps: Step[], value: unknown): unknown[] {
  let current: unknown[] = [value];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if (v === null || v === undefined) continue;
      switch (step.kind) {
        case 'field':
          if (typeof v === 'object' && !Array.isArray(v) && step.name in v) next.push((v as JsonObject)[step.name]);
          break;
        case 'index':
          if (Array.isArray(v)) {
            const idx = step.index < 0 ? v.length + step.index : step.index;
            if (idx >= 0 && idx < v.length) next.push(v[idx]);
          }
          break;
        case 'all':
          if (Array.isArray(v)) next.push(...v);
          else if (typeof v === 'object') next.push(...Object.values(v));
          break;
        case 'filter':
          if (Array.isArray(v)) {
            for (const item of v) {
              const [found] = evaluate(step.path.map((name) => ({ kind: 'field', name })), item);
              if (step.op === '==' ? found === step.value : found !== step.value) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current;
}

const parsedPaths = new Map<string, Step[]>();

/** The first value a Kubernetes JSONPath selects in `object`, or undefined. */
export function jsonPathFirst(object: unknown, expression: string): unknown {
  let steps = parsedPaths.get(expression);
  if (!steps) {
    steps = parseJsonPath(expression);
    parsedPaths.set(expression, steps);
  }
  return evaluate(steps, object)[0];
}
