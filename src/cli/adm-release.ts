// `bosun adm release graph`: prints the CVO's task graph of a payload as Graphviz DOT, so people
// can see what the CVO will apply in which order and what runs in parallel. The graph holds what
// a cluster running that payload includes: the profile, the feature set and gates given, and the
// payload's own major version (release.openshift.io/major-version); --list prints every
// manifest as included or excluded, with why, instead.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { defaultProfile, filterManifests } from '../cvo/payload/inclusion.js';
import { majorVersionOf } from '../cvo/payload/feature-gates.js';
import { describeManifest } from '../cvo/payload/manifest.js';
import { loadPayload } from '../cvo/payload/payload.js';
import { resolvePullspec } from '../release/release-store.js';
import { buildTaskGraph, graphModes, taskGraphToDot, type GraphMode } from '../cvo/task-graph.js';
import { admGroup } from './adm.js';

export function register(program: Command): void {
  const adm = admGroup(program);
  const release = adm.commands.find((c) => c.name() === 'release') ?? adm.command('release').description('inspect release payloads');
  release
    .command('graph')
    .description("print the CVO's task graph of a payload as Graphviz DOT")
    .argument('<payload>', 'a release directory (holding release-manifests/) or a pullspec bosun.local/release@sha256:<hex> with --store')
    .option('--mode <mode>', `graph mode: ${graphModes.join(', ')}`, 'Updating')
    .option('--attempt <n>', 'Reconciling: the attempt number that rotates the order', '0')
    .option('--store <dir>', 'release store to resolve a pullspec in')
    .option('--profile <profile>', 'cluster profile: only manifests annotated include.release.openshift.io/<profile> are in the graph', defaultProfile)
    .option('--feature-set <set>', 'feature set of the cluster (Default, TechPreviewNoUpgrade, …): manifests annotated release.openshift.io/feature-set for others are left out', 'Default')
    .option('--feature-gates <gates>', 'comma-separated feature gates enabled on the cluster, for release.openshift.io/feature-gate ("Gate" needs it enabled, "-Gate" disabled)', '')
    .option('--manifests', 'list every manifest in its node')
    .option('--list', 'instead of the graph, print each manifest of the payload as included or excluded (with the reason)')
    .addHelpText('after', '\nExample:\n  bosun adm release graph --store .bosun/releases bosun.local/release@sha256:… | dot -Tsvg > graph.svg')
    .action((payloadArg: string, opts: { mode: string; attempt: string; store?: string; profile: string; featureSet: string; featureGates: string; manifests?: boolean; list?: boolean }) => {
      try {
        const mode = graphModes.find((m) => m.toLowerCase() === opts.mode.toLowerCase());
        if (!mode) throw new Error(`--mode must be one of ${graphModes.join(', ')}, not ${JSON.stringify(opts.mode)}`);
        const attempt = Number.parseInt(opts.attempt, 10);
        if (!Number.isInteger(attempt) || attempt < 0) throw new Error(`--attempt must be a non-negative integer, not ${JSON.stringify(opts.attempt)}`);
        let dir = payloadArg;
        if (!existsSync(payloadArg)) {
          if (!opts.store) throw new Error(`${payloadArg} is not a directory; to name a release by pullspec, give --store`);
          dir = resolvePullspec(opts.store, payloadArg);
        }
        const payload = loadPayload(dir);
        const { included, excluded } = filterManifests(payload.manifests, {
          profile: opts.profile,
          featureSet: opts.featureSet === 'Default' ? '' : opts.featureSet,
          enabledFeatureGates: new Set(opts.featureGates.split(',').map((g) => g.trim()).filter((g) => g !== '')),
          majorVersion: majorVersionOf(payload.version),
        });
        if (opts.list) {
          const line = (m: (typeof included)[number], verdict: string) => `${m.file}\t${describeManifest(m)}\t${verdict}\n`;
          const reasons = new Map(excluded.map((e) => [e.manifest, e.reason]));
          process.stdout.write(`# release ${payload.version}: ${included.length} of ${payload.manifests.length} manifests included\n`);
          for (const m of payload.manifests) process.stdout.write(line(m, reasons.has(m) ? `excluded: ${reasons.get(m)}` : 'included'));
          return;
        }
        process.stdout.write(taskGraphToDot(buildTaskGraph(included, mode as GraphMode, { attempt }), { perManifest: opts.manifests }));
      } catch (err) {
        console.error(`error: ${(err as Error).message}`);
        process.exitCode = 1;
      }
    });
}
