// Resolution (the catalog operator's resolver, pure): which bundle a Subscription installs first —
// its channel's head, or its startingCSV — which bundle an installed one upgrades to along the
// channel, and what the bundle needs that is not there yet. No I/O: the caller hands in the catalogs
// and what is installed.
//
// Upgrades walk the channel as OLM does: the candidates are the entries that replace the installed
// bundle, skip it, or whose skipRange holds its version; the one nearest the head (along the
// replaces chain from the head; then the higher version) wins. So a plain replaces chain moves one
// step at a time, a skipped bundle is passed over, and a head whose skipRange covers the installed
// version is reached in one jump.
//
// Every failure is a ResolutionError whose message names the package, the channel and the missing
// requirement (OLM's "constraints not satisfiable" says neither).
import semver from 'semver';
import { BosunError } from '../common/errors.js';
import type { Bundle, Catalog, Channel, Gvk, Package } from './fbc.js';

export class ResolutionError extends BosunError {
  constructor(message: string) {
    super('ResolutionFailed', message);
  }
}

/** A catalog by its CatalogSource. */
export interface CatalogRef {
  name: string;
  namespace: string;
  catalog: Catalog;
  priority?: number;
}

export interface Resolved {
  source: CatalogRef;
  pkg: Package;
  channel: Channel;
  bundle: Bundle;
}

/** The package and channel a Subscription follows (the package's default channel when it names none). */
export function subscribedChannel(source: CatalogRef, packageName: string, channelName: string | undefined): { pkg: Package; channel: Channel } {
  const pkg = source.catalog.packages.get(packageName);
  if (!pkg) {
    const known = [...source.catalog.packages.keys()].sort();
    throw new ResolutionError(`package "${packageName}" not found in catalog ${source.namespace}/${source.name} (it has: ${known.join(', ') || 'no packages'})`);
  }
  const name = channelName || pkg.defaultChannel;
  const channel = pkg.channels.get(name);
  if (!channel) throw new ResolutionError(`channel "${name}" of package "${packageName}" not found in catalog ${source.namespace}/${source.name} (its channels: ${[...pkg.channels.keys()].sort().join(', ')})`);
  return { pkg, channel };
}

/** What a Subscription installs first: its startingCSV (which must be in the channel) or the channel's head. */
export function resolveInitial(source: CatalogRef, packageName: string, channelName: string | undefined, startingCSV?: string): Resolved {
  const { pkg, channel } = subscribedChannel(source, packageName, channelName);
  const name = startingCSV || channel.head;
  if (!channel.entries.some((e) => e.name === name)) {
    throw new ResolutionError(`startingCSV "${name}" is not in channel "${channel.name}" of package "${packageName}" in catalog ${source.namespace}/${source.name} (its entries: ${channel.entries.map((e) => e.name).join(', ')})`);
  }
  return { source, pkg, channel, bundle: pkg.bundles.get(name)! };
}

/** Distance of each entry from the head along the replaces chain (head 0); entries off the chain are not listed. */
function chainDistance(channel: Channel): Map<string, number> {
  const byName = new Map(channel.entries.map((e) => [e.name, e]));
  const distance = new Map<string, number>();
  let current = byName.get(channel.head);
  for (let d = 0; current && !distance.has(current.name); d++) {
    distance.set(current.name, d);
    current = current.replaces ? byName.get(current.replaces) : undefined;
  }
  return distance;
}

/** The bundle `installed` (a CSV name, its version) upgrades to in the channel, or undefined at the latest. */
export function nextUpgrade(pkg: Package, channel: Channel, installed: { name: string; version?: string }): Bundle | undefined {
  const version = installed.version ?? pkg.bundles.get(installed.name)?.version;
  const candidates = channel.entries.filter((e) =>
    e.name !== installed.name && (e.replaces === installed.name || e.skips.includes(installed.name) || (e.skipRange !== undefined && version !== undefined && semver.valid(version) !== null && semver.satisfies(version, e.skipRange, { includePrerelease: true }))),
  );
  if (candidates.length === 0) return undefined;
  const distance = chainDistance(channel);
  const far = Number.MAX_SAFE_INTEGER;
  const best = [...candidates].sort((a, b) => (distance.get(a.name) ?? far) - (distance.get(b.name) ?? far) || semver.rcompare(pkg.bundles.get(a.name)!.version, pkg.bundles.get(b.name)!.version))[0];
  return pkg.bundles.get(best.name);
}

export const gvkString = (g: Gvk) => `${g.group ? `${g.group}/` : ''}${g.version}, Kind=${g.kind}`;

/** What is installed (in the namespace's scope) that a bundle's requirements may be met by. */
export interface Installed {
  /** The APIs provided: owned CRDs of installed CSVs. */
  apis: Gvk[];
  /** Installed packages and their versions. */
  packages: { packageName: string; version: string }[];
}

const sameGvk = (a: Gvk, b: Gvk) => a.group === b.group && a.version === b.version && a.kind === b.kind;

/**
 * The bundles to install beside `target` so that its olm.gvk.required and olm.package.required are
 * met: nothing for a requirement already installed; otherwise the first bundle that provides it
 * (the target's catalog first, then by priority; the default channel first; nearest the head first). A requirement nothing meets is a ResolutionError naming it.
 */
export function dependencies(target: Resolved, catalogs: readonly CatalogRef[], installed: Installed): Resolved[] {
  const chosen: Resolved[] = [];
  const pending: Resolved[] = [target];
  const apis = [...installed.apis];
  const packages = [...installed.packages];
  const plannedBy = (r: Resolved) => `bundle ${r.bundle.name} (package "${r.pkg.name}", channel "${r.channel.name}", catalog ${r.source.namespace}/${r.source.name})`;
  // Candidates in OLM's order of preference: catalog, the default channel first, then nearest the head.
  const candidates = (ordered: readonly CatalogRef[]) =>
    ordered.flatMap((source) => [...source.catalog.packages.values()].flatMap((pkg) =>
      [...pkg.channels.values()]
        .sort((a, b) => Number(b.name === pkg.defaultChannel) - Number(a.name === pkg.defaultChannel))
        .flatMap((channel) => {
          const distance = chainDistance(channel);
          return [...channel.entries]
            .sort((a, b) => (distance.get(a.name) ?? Number.MAX_SAFE_INTEGER) - (distance.get(b.name) ?? Number.MAX_SAFE_INTEGER))
            .map((e) => ({ source, pkg, channel, bundle: pkg.bundles.get(e.name)! }));
        })));
  const take = (r: Resolved) => {
    chosen.push(r);
    pending.push(r);
    apis.push(...r.bundle.provides);
    packages.push({ packageName: r.pkg.name, version: r.bundle.version });
  };
  apis.push(...target.bundle.provides);
  packages.push({ packageName: target.pkg.name, version: target.bundle.version });
  // The target's own catalog first, then by priority (higher first), as OLM prefers them.
  const ordered = [target.source, ...[...catalogs].filter((c) => c.name !== target.source.name || c.namespace !== target.source.namespace).sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0))];
  // One bundle per package: a candidate of a package already chosen or installed is left out.
  const open = (h: Resolved) => !packages.some((p) => p.packageName === h.pkg.name);
  while (pending.length > 0) {
    const r = pending.shift()!;
    // Package requirements first: they are the narrower, and what they choose may provide the APIs.
    for (const req of r.bundle.requiresPackages) {
      if (packages.some((p) => p.packageName === req.packageName && semver.satisfies(p.version, req.versionRange, { includePrerelease: true }))) continue;
      const provider = candidates(ordered).find((h) => open(h) && h.pkg.name === req.packageName && semver.satisfies(h.bundle.version, req.versionRange, { includePrerelease: true }));
      if (!provider) throw new ResolutionError(`${plannedBy(r)} requires package "${req.packageName}" in version range ${req.versionRange}, which is not installed and which no catalog offers`);
      take(provider);
    }
    for (const gvk of r.bundle.requires) {
      if (apis.some((a) => sameGvk(a, gvk))) continue;
      const provider = candidates(ordered).find((h) => open(h) && h.bundle.provides.some((p) => sameGvk(p, gvk)));
      if (!provider) throw new ResolutionError(`${plannedBy(r)} requires API ${gvkString(gvk)}, which no installed operator provides and no bundle of any catalog offers`);
      take(provider);
    }
  }
  return chosen;
}
