/**
 * Rows as aligned columns, the way kubectl and `oc adm upgrade` print tables: every column but
 * the last padded to its widest cell, three spaces between columns, no trailing blanks.
 */
export function columns(rows: string[][], indent = ''): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => (indent + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('   ')).trimEnd()).join('\n');
}
