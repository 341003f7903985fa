// Synthesises release metadata for graph data that carries no edges (the real
// cincinnati-graph-data snapshot): one amd64 release per version named in any channel, whose
// `previous` lists every earlier version of the same minor plus the last few of the previous minor.
import { createHash } from 'node:crypto';
import semver from 'semver';
import type { GraphData } from '../../src/update-service/graph-data.js';
import type { Release } from '../../src/update-service/graph.js';

export function synthesiseReleases(data: GraphData, fromPreviousMinor = 10): Release[] {
  const versions = [...new Set(data.channels.flatMap((c) => c.versions))].sort(semver.compare);
  const byMinor = new Map<string, string[]>();
  for (const v of versions) {
    const key = `${semver.major(v)}.${semver.minor(v)}`;
    byMinor.set(key, [...(byMinor.get(key) ?? []), v]);
  }
  return versions.map((v) => {
    const major = semver.major(v);
    const minor = semver.minor(v);
    const sameMinor = byMinor.get(`${major}.${minor}`)!.filter((p) => semver.lt(p, v));
    const previousMinor = (byMinor.get(`${major}.${minor - 1}`) ?? []).slice(-fromPreviousMinor);
    const digest = createHash('sha256').update(v).digest('hex');
    return { version: v, arch: 'amd64', payload: `bosun.local/release@sha256:${digest}`, previous: [...previousMinor, ...sameMinor], next: [], metadata: {} };
  });
}
