// The update graph as a picture (SVG), from the ClusterVersion's status as the CVO fills it from
// the update service: the version before (history), the current version, and every offered update
// in columns by minor version (z-stream first, then each newer minor), one row per version so that
// no edge runs through another version's box. Edges: recommended (solid),
// conditional (dashed, its risks named, "not recommended" when Recommended=False), blocked (an
// update to another minor while Upgradeable=False: crossed out, with the reason). Risks with
// their links are listed under the picture.
import type * as api from '../../api/index.js';

export type EdgeKind = 'recommended' | 'conditional' | 'blocked';

export interface GraphEdge {
  version: string;
  image?: string;
  kind: EdgeKind;
  recommended?: string;
  risks: { name: string; message?: string; url?: string }[];
  blockedBy?: string;
}

const minor = (v: string) => v.split('.').slice(0, 2).join('.');
const parts = (v: string) => v.split(/[.+-]/).map((p) => (/^\d+$/.test(p) ? Number(p) : p));
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === y[i]) continue;
    if (x[i] === undefined) return -1;
    if (y[i] === undefined) return 1;
    return typeof x[i] === 'number' && typeof y[i] === 'number' ? (x[i] as number) - (y[i] as number) : String(x[i]) < String(y[i]) ? -1 : 1;
  }
  return 0;
}

/** The edges out of the current version, as the page draws and offers them. */
export function updateEdges(cv: api.ClusterVersion | undefined): GraphEdge[] {
  const current = cv?.status?.desired?.version ?? '';
  const upgradeable = (cv?.status?.conditions ?? []).find((c) => c.type === 'Upgradeable');
  const blocked = (v: string) => (upgradeable?.status === 'False' && current && minor(v) !== minor(current) ? `${upgradeable.reason ?? 'NotUpgradeable'}: ${upgradeable.message ?? ''}` : undefined);
  const edges: GraphEdge[] = [];
  for (const r of cv?.status?.availableUpdates ?? []) {
    const why = blocked(r.version);
    edges.push({ version: r.version, image: r.image, kind: why ? 'blocked' : 'recommended', risks: [], blockedBy: why });
  }
  for (const c of cv?.status?.conditionalUpdates ?? []) {
    const why = blocked(c.release.version);
    const recommended = (c.conditions ?? []).find((x) => x.type === 'Recommended');
    edges.push({
      version: c.release.version, image: c.release.image, kind: why ? 'blocked' : 'conditional', recommended: recommended?.status,
      risks: (c.risks ?? []).map((r) => ({ name: r.name, message: r.message, url: r.url })), blockedBy: why,
    });
  }
  // Right after an update the offers may still be those retrieved for the version before (the CVO
  // asks its update service again on its own schedule): an "update" to the version the cluster
  // is at is no update, and is not offered.
  return edges.filter((e) => e.version !== current).sort((a, b) => compareVersions(a.version, b.version));
}

const BOX_W = 110;
const BOX_H = 30;
const COL_GAP = 90;
const ROW_GAP = 14;

export function UpdateGraph({ cv }: { cv: api.ClusterVersion | undefined }) {
  const current = cv?.status?.desired?.version;
  if (!current) return <p>The cluster has no current version yet.</p>;
  const edges = updateEdges(cv);
  const previous = (cv?.status?.history ?? []).find((h) => h.version !== current && h.state === 'Completed')?.version;
  const minors = [...new Set(edges.map((e) => minor(e.version)))].sort(compareVersions);
  const columns = minors.map((m) => edges.filter((e) => minor(e.version) === m));
  const rows = Math.max(1, edges.length);
  const height = rows * (BOX_H + ROW_GAP) + 40;
  const x0 = previous ? BOX_W + COL_GAP : 10;
  const width = x0 + BOX_W + columns.length * (BOX_W + COL_GAP) + 20;
  const cy = height / 2;
  const desired = cv?.spec?.desiredUpdate?.version;
  const nodeAt = (col: number, row: number) => ({ x: x0 + (col + 1) * (BOX_W + COL_GAP), y: cy - (rows * (BOX_H + ROW_GAP) - ROW_GAP) / 2 + row * (BOX_H + ROW_GAP) });
  const description = [
    `Current version ${current}${previous ? `, updated from ${previous}` : ''}.`,
    edges.length ? `Updates: ${edges.map((e) => `${e.version} (${e.kind === 'conditional' ? `conditional${e.recommended === 'False' ? ', not recommended' : ''}` : e.kind})`).join(', ')}.` : 'No updates offered on this channel.',
  ].join(' ');
  return (
    <figure class="graph">
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`Update graph. ${description}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow" /></marker>
        </defs>
        {previous && (
          <g class="previous">
            <line x1={10 + BOX_W} y1={cy} x2={x0 - 2} y2={cy} class="edge edge-history" marker-end="url(#arrow)" />
            <rect x={10} y={cy - BOX_H / 2} width={BOX_W} height={BOX_H} rx="6" />
            <text x={10 + BOX_W / 2} y={cy + 5} text-anchor="middle">{previous}</text>
          </g>
        )}
        {columns.map((column, col) =>
          column.map((e) => {
            const p = nodeAt(col, edges.indexOf(e));
            const from = { x: x0 + BOX_W, y: cy };
            const to = { x: p.x - 2, y: p.y + BOX_H / 2 };
            const mid = { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 };
            return (
              <g key={e.version} class={`edge-group edge-${e.kind}${e.recommended === 'False' ? ' not-recommended' : ''}`} data-version={e.version}>
                <path d={`M${from.x},${from.y} C${from.x + 40},${from.y} ${to.x - 40},${to.y} ${to.x},${to.y}`} class={`edge edge-${e.kind}`} marker-end="url(#arrow)" />
                {e.kind === 'blocked' && <text x={mid.x} y={mid.y + 5} class="blocked-mark" text-anchor="middle">✕</text>}
                <rect x={p.x} y={p.y} width={BOX_W} height={BOX_H} rx="6" class={`node node-${e.kind}${desired === e.version ? ' node-desired' : ''}`} />
                <text x={p.x + BOX_W / 2} y={p.y + BOX_H / 2 + 5} text-anchor="middle">{e.version}</text>
              </g>
            );
          }),
        )}
        <rect x={x0} y={cy - BOX_H / 2} width={BOX_W} height={BOX_H} rx="6" class="node node-current" />
        <text x={x0 + BOX_W / 2} y={cy + 5} text-anchor="middle" class="current-label">{current}</text>
      </svg>
      <figcaption>
        <span class="legend legend-recommended">recommended</span>
        <span class="legend legend-conditional">conditional (known risks)</span>
        <span class="legend legend-blocked">blocked</span>
        {edges.some((e) => e.risks.length || e.blockedBy) && (
          <ul class="risks">
            {edges.filter((e) => e.risks.length || e.blockedBy).map((e) => (
              <li key={e.version}>
                <strong>{e.version}</strong>
                {e.blockedBy && <> blocked: {e.blockedBy}</>}
                {e.risks.map((r) => (
                  <span key={r.name}> risk <strong>{r.name}</strong>{r.message ? `: ${r.message}` : ''}{r.url && <> (<a href={r.url} target="_blank" rel="noreferrer">{r.url}</a>)</>}{e.recommended === 'False' ? ' — not recommended for this cluster' : e.recommended === 'Unknown' ? ' — not yet evaluated' : ''}</span>
                ))}
              </li>
            ))}
          </ul>
        )}
      </figcaption>
    </figure>
  );
}
