// `bosun adm upgrade …` (modelled on `oc adm upgrade`). This file has the cluster-less part:
// `recommend` asks any Cincinnati-compatible service what a cluster at a version on a channel may
// move to. The cluster-facing forms (status, channel, --to …) are in adm-upgrade-cluster.ts.
import type { Command } from 'commander';
import { walkGraph, GraphWalkError, type UpdateChoices } from '../cvo/updates/graph-walk.js';
import { evaluateConditionalUpdate } from '../cvo/updates/risks.js';
import { fetchUpdateGraph, RetrievalError } from '../cvo/updates/upstream.js';
import { admGroup } from './adm.js';
import { registerClusterUpgrade } from './adm-upgrade-cluster.js';
import { registerUpgradeStatus } from './adm-upgrade-status.js';
import { columns } from './columns.js';

const table = (rows: string[][]) => columns(rows, '  ');

/** Renders what a cluster may move to, as `recommend` prints it. */
export async function renderRecommendations(upstream: string, channel: string, version: string, choices: UpdateChoices): Promise<string> {
  const out: string[] = [`Upstream: ${upstream}`, `Channel: ${channel}${choices.channels.length ? ` (available channels: ${choices.channels.join(', ')})` : ''}`, ''];
  if (choices.availableUpdates.length === 0) out.push(`No recommended updates from ${version}.`);
  else out.push(`Recommended updates from ${version}:`, '', table([['VERSION', 'IMAGE'], ...choices.availableUpdates.map((r) => [r.version, r.image])]));
  if (choices.conditionalUpdates.length > 0) {
    out.push('', 'Updates with known risks (not recommended; --allow-not-recommended to take one):');
    for (const update of choices.conditionalUpdates) {
      // Without a cluster only `Always` can be decided; PromQL risks show as not evaluated.
      const recommended = await evaluateConditionalUpdate(update, undefined);
      out.push('', `  Version: ${update.release.version}`, `  Image: ${update.release.image}`, `  Recommended: ${recommended.status} (${recommended.reason})`);
      for (const risk of update.risks) {
        const rules = risk.matchingRules.map((r) => r.type).join(', ');
        out.push(`  Risk: ${risk.name} [${rules}] ${risk.url}`, ...risk.message.split('\n').map((l) => `    ${l}`));
      }
    }
  }
  return out.join('\n');
}

/**
 * Adds `upgrade` and its cluster-less subcommands to an existing `adm` command; returns the
 * `upgrade` command so the cluster-facing forms (status, channel, --to …) can be added to it.
 */
export function registerAdmUpgrade(adm: Command): Command {
  const upgrade = adm.command('upgrade').description('show and start cluster updates (like `oc adm upgrade`)');
  upgrade
    .command('recommend')
    .description('without a cluster: list the updates a cluster at VERSION on CHANNEL may take, from any Cincinnati-compatible service')
    .requiredOption('--upstream <url>', 'the update service (its graph URL, or just its base URL)')
    .requiredOption('--channel <name>', 'the channel, e.g. stable-1.0 or stable-4.14')
    .requiredOption('--version <version>', 'the version the cluster is on')
    .option('--arch <arch>', 'architecture', 'amd64')
    .addHelpText('after', '\nExample:\n  bosun adm upgrade recommend --upstream http://127.0.0.1:8080 --channel stable-1.0 --version 1.0.0')
    .action(async (opts: { upstream: string; channel: string; version: string; arch: string }) => {
      try {
        const graph = await fetchUpdateGraph({ upstream: opts.upstream, channel: opts.channel, arch: opts.arch, version: opts.version });
        console.log(await renderRecommendations(opts.upstream, opts.channel, opts.version, walkGraph(graph, opts.version)));
      } catch (err) {
        if (err instanceof RetrievalError || err instanceof GraphWalkError) {
          console.error(`error: ${err.reason}: ${err.message}`);
          process.exit(1);
        }
        throw err;
      }
    });
  return upgrade;
}

/** Registers `bosun adm upgrade`. */
export function register(program: Command): void {
  const upgrade = registerAdmUpgrade(admGroup(program));
  registerClusterUpgrade(upgrade);
  registerUpgradeStatus(upgrade);
}
