// A fast reader for the small YAML subset graph-data files are written in: block mappings and
// sequences, plain string scalars and `|` / `|-` block scalars. Reading the 1,800 real files with
// the full `yaml` parser costs most of the graph build; this takes a fraction of that. Anything
// outside the subset (quotes, flow collections, numbers, booleans, anchors, tabs, comments after
// values…) returns undefined and the caller uses the full parser, so results never differ; a test
// checks that on every file of the real graph data.

interface Line {
  indent: number;
  text: string;
  raw: string;
}

class OutsideSubset extends Error {}

const KEY_LINE = /^([A-Za-z_][\w.\-/]*):(?: +(.*))?$/;
// Core-schema scalars that would not be strings, and characters that start non-plain scalars.
const NON_STRING = /^(?:[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|null|Null|NULL|~|true|True|TRUE|false|False|FALSE)$/;
const SPECIAL_START = /^[-?:,[\]{}#&*!|>'"%@`]/;

function plain(value: string): string {
  const v = value.trimEnd();
  if (v === '' || (SPECIAL_START.test(v) && !/^-[^\s]/.test(v))) throw new OutsideSubset();
  if (v.includes(': ') || v.includes(' #') || v.endsWith(':') || NON_STRING.test(v)) throw new OutsideSubset();
  return v;
}

export function parseSimpleYaml(text: string): unknown {
  if (text.includes('\t') || text.includes('\r')) return undefined;
  const raws = text.split('\n');
  const lines: Line[] = raws.map((raw) => {
    const trimmed = raw.trimStart();
    return { indent: raw.length - trimmed.length, text: trimmed.trimEnd(), raw };
  });
  let i = 0;
  const skipBlank = (): void => {
    while (i < lines.length && (lines[i].text === '' || lines[i].text.startsWith('#'))) i++;
  };

  function blockScalar(keyIndent: number, chomp: 'clip' | 'strip'): string {
    const out: string[] = [];
    let contentIndent = -1;
    while (i < lines.length) {
      const l = lines[i];
      if (l.text === '') {
        if (contentIndent >= 0 && l.raw.length > contentIndent) throw new OutsideSubset();
        out.push('');
        i++;
        continue;
      }
      if (contentIndent < 0) {
        if (l.indent <= keyIndent) break;
        contentIndent = l.indent;
      }
      if (l.indent < contentIndent) {
        if (l.indent > keyIndent) throw new OutsideSubset();
        break;
      }
      out.push(l.raw.slice(contentIndent));
      i++;
    }
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    const body = out.join('\n');
    return chomp === 'clip' && body !== '' ? `${body}\n` : body;
  }

  function value(keyIndent: number, rest: string | undefined): unknown {
    if (rest === undefined || rest === '') {
      skipBlank();
      if (i >= lines.length) throw new OutsideSubset();
      const next = lines[i];
      if (next.indent > keyIndent) return block(next.indent);
      if (next.indent === keyIndent && (next.text.startsWith('- ') || next.text === '-')) return sequence(keyIndent);
      throw new OutsideSubset(); // a null value
    }
    if (rest === '|' || rest === '|-') return blockScalar(keyIndent, rest === '|' ? 'clip' : 'strip');
    return plain(rest);
  }

  function mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      skipBlank();
      if (i >= lines.length) return out;
      const l = lines[i];
      if (l.indent < indent) return out;
      if (l.indent > indent || l.text.startsWith('- ')) throw new OutsideSubset();
      const m = KEY_LINE.exec(l.text);
      if (!m || m[1] in out) throw new OutsideSubset();
      i++;
      out[m[1]] = value(indent, m[2]);
    }
  }

  function sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (;;) {
      skipBlank();
      if (i >= lines.length) return out;
      const l = lines[i];
      if (l.indent < indent || !(l.text.startsWith('- '))) {
        if (l.indent > indent) throw new OutsideSubset();
        return out;
      }
      if (l.indent > indent) throw new OutsideSubset();
      const content = l.text.slice(2).trimStart();
      const contentIndent = l.indent + (l.text.length - content.length);
      if (KEY_LINE.test(content)) {
        // "- key: value" opens a mapping whose keys line up with `key`.
        lines[i] = { indent: contentIndent, text: content, raw: ' '.repeat(contentIndent) + content };
        out.push(mapping(contentIndent));
      } else {
        i++;
        out.push(plain(content));
      }
    }
  }

  function block(indent: number): unknown {
    const l = lines[i];
    return l.text.startsWith('- ') ? sequence(indent) : mapping(indent);
  }

  try {
    skipBlank();
    if (i >= lines.length || lines[i].indent !== 0 || lines[i].text.startsWith('---')) return undefined;
    const doc = block(0);
    skipBlank();
    return i === lines.length ? doc : undefined;
  } catch (err) {
    if (err instanceof OutsideSubset) return undefined;
    throw err;
  }
}
