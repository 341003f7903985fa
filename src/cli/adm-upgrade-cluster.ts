// `bosun adm upgrade` against a cluster (modelled on `oc adm upgrade`): with no arguments, the
// cluster's update state in plain words and its recommended updates; `--to`, `--to-latest`,
// `--to-image` start an update (with `--wait`, followed to the end: the ClusterVersion with a
// progress bar that never goes back (adm-upgrade-progress.ts), then the machine config pools
// rolling the release's configs over the nodes); `channel NAME` picks the channel. The pure parts
// (rendering, choosing a target) are exported for tests.
import type { ClusterVersion, MachineConfigPool } from '../api/index.js';
import { BosunError } from '../common/errors.js';
import type { Command } from 'commander';
import semver from 'semver';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { isConflict, isNotFound, KubeClient } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { UpgradeProgressTracker } from './adm-upgrade-progress.js';
import { columns } from './columns.js';

/** A status condition as this command reads it, on a ClusterVersion or a MachineConfigPool. */
interface Cond { type?: string; status?: string; reason?: string; message?: string }
const CV = resources.clusterVersions;
const CV_NAME = 'version';

export class UpgradeCommandError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('UpgradeRefused', message, options);
  }
}

const cond = (o: { status?: { conditions?: readonly Cond[] } }, type: string): Cond | undefined => (o.status?.conditions ?? []).find((c) => c.type === type);

const table = (rows: string[][]) => columns(rows, '  ');

function block(title: string, c: Cond): string[] {
  return [title, '', `  Reason: ${c.reason || '(none)'}`, `  Message: ${String(c.message ?? '').split('\n').join('\n  ')}`, ''];
}

/** The cluster's update state, as `bosun adm upgrade` prints it. */
export function renderUpgradeStatus(cv: ClusterVersion, includeNotRecommended: boolean): string {
  const out: string[] = [];
  const progressing = cond(cv, 'Progressing');
  const current = (cv.status?.history ?? []).find((h) => h.state === 'Completed');
  if (progressing?.status === 'True') out.push(`info: An upgrade is in progress. ${progressing.message}`, '');
  else out.push(current ? `Cluster version is ${current.version}` : 'The cluster has not finished installing yet.', '');
  for (const [type, bad] of [['Failing', 'True'], ['ReleaseAccepted', 'False'], ['Upgradeable', 'False']] as const) {
    const c = cond(cv, type);
    if (c?.status === bad) out.push(...block(`${type}=${bad}`, c));
  }
  out.push(`Upstream: ${cv.spec?.upstream ?? '(none: no updates can be retrieved)'}`);
  const channels: string[] = cv.status?.desired?.channels ?? [];
  out.push(`Channel: ${cv.spec?.channel || '(none)'}${channels.length ? ` (available channels: ${channels.join(', ')})` : ''}`, '');
  const retrieved = cond(cv, 'RetrievedUpdates');
  if (retrieved?.status === 'False') out.push(...block('warning: Cannot display available updates:', retrieved));
  const available = cv.status?.availableUpdates ?? [];
  if (available.length === 0) out.push('No updates available. You may still upgrade to a specific release image with --to-image or wait for new updates to be available.');
  else out.push('Recommended updates:', '', table([['VERSION', 'IMAGE'], ...[...available].sort((a, b) => semver.rcompare(a.version, b.version)).map((u) => [u.version, u.image])]));
  const conditional = cv.status?.conditionalUpdates ?? [];
  if (conditional.length > 0) {
    if (!includeNotRecommended) out.push('', `Additional updates which are not recommended for your cluster configuration are available, to view those re-run the command with --include-not-recommended.`);
    else {
      out.push('', 'Supported but not recommended updates:');
      for (const u of conditional) {
        const rec: Cond = (u.conditions ?? []).find((c) => c.type === 'Recommended') ?? {};
        out.push('', `  Version: ${u.release.version}`, `  Image: ${u.release.image}`, `  Recommended: ${rec.status ?? 'Unknown'}`, `  Reason: ${rec.reason ?? ''}`, `  Message: ${String(rec.message ?? '').split('\n').join('\n  ')}`);
      }
    }
  }
  return out.join('\n');
}

export interface TargetRequest {
  to?: string;
  toLatest?: boolean;
  toImage?: string;
  allowNotRecommended?: boolean;
  allowExplicitUpgrade?: boolean;
  force?: boolean;
}

/** The desiredUpdate to set for a request, or an error saying why not. */
export function chooseTarget(cv: ClusterVersion, req: TargetRequest): { version?: string; image: string; force?: boolean } {
  const available = cv.status?.availableUpdates ?? [];
  const conditional = cv.status?.conditionalUpdates ?? [];
  const force = req.force ? { force: true } : {};
  if ([req.to, req.toLatest, req.toImage].filter(Boolean).length !== 1) throw new UpgradeCommandError('give exactly one of --to, --to-latest or --to-image');
  if (req.toImage) {
    if (!/@sha256:[0-9a-f]{64}$/.test(req.toImage) && !req.force) throw new UpgradeCommandError(`--to-image must name the release by digest (…@sha256:<64 hex>) so it cannot change underneath you; use --force to take ${req.toImage} anyway`);
    const offered = [...available, ...conditional.map((c) => c.release)].find((r) => r.image === req.toImage);
    if (!offered && !req.allowExplicitUpgrade && !req.force) {
      throw new UpgradeCommandError(`${req.toImage} is not one of the available updates; pass --allow-explicit-upgrade to update to it anyway`);
    }
    return { image: req.toImage, ...(offered ? { version: offered.version } : {}), ...force };
  }
  if (req.toLatest) {
    if (available.length === 0) throw new UpgradeCommandError('no recommended updates are available');
    const latest = [...available].sort((a, b) => semver.rcompare(a.version, b.version))[0];
    return { version: latest.version, image: latest.image, ...force };
  }
  const version = req.to!;
  const rec = available.find((u) => u.version === version);
  if (rec) return { version, image: rec.image, ...force };
  const cond = conditional.find((u) => u.release.version === version);
  if (cond) {
    if (!req.allowNotRecommended) {
      const risks = (cond.risks ?? []).map((r) => `${r.name}: ${r.message}`).join('; ');
      throw new UpgradeCommandError(`the update ${version} is not one of the recommended updates, but is available as a conditional update (${risks}); pass --allow-not-recommended to take it`);
    }
    return { version, image: cond.release.image, ...force };
  }
  const offered = [...available.map((u) => u.version), ...conditional.map((u) => u.release.version)];
  throw new UpgradeCommandError(`the update ${version} is not one of the available updates: ${offered.length ? offered.join(', ') : 'none'}`);
}

/** The API client (client-node only loads the kubeconfig and its credentials). */
function client(kubeconfig?: string): KubeClient {
  return new KubeClient(loadKubeConfig(kubeconfig));
}

async function readCV(api: KubeClient): Promise<ClusterVersion> {
  try {
    return await api.get(CV, CV_NAME);
  } catch (e) {
    if (isNotFound(e)) throw new UpgradeCommandError('there is no ClusterVersion "version" in this cluster');
    throw new UpgradeCommandError(`cannot read ClusterVersion "version": ${(e as Error).message.split('\n')[0]}`);
  }
}

async function patchSpec(api: KubeClient, change: (spec: ClusterVersion['spec']) => ClusterVersion['spec']): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const cv = await readCV(api);
    try {
      await api.update(CV, { ...cv, spec: change({ ...cv.spec }) });
      return;
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  throw new UpgradeCommandError('the ClusterVersion kept changing underneath; try again');
}

/** Follows an update until its history entry is Completed; fails on Failing or refusal. */
async function follow(api: KubeClient, image: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  const tty = process.stdout.isTTY;
  const progress = new UpgradeProgressTracker();
  for (;;) {
    const cv = await readCV(api);
    const head = cv.status?.history?.[0];
    if (head?.image === image && head.state === 'Completed') {
      if (tty && last) process.stdout.write('\n');
      await followPools(api, deadline);
      console.log(`Cluster version is ${head.version}`);
      return;
    }
    const accepted = cond(cv, 'ReleaseAccepted');
    if (accepted?.status === 'False' && (cv.spec?.desiredUpdate?.image ?? image) === image && head?.image !== image) {
      throw new UpgradeCommandError(`the update was not accepted (${accepted.reason}): ${accepted.message}`);
    }
    const line = progress.observe(cv);
    if (line !== last) {
      if (tty) process.stdout.write(`\r${line.slice(0, (process.stdout.columns ?? 120) - 1).padEnd(Math.min(last.length, (process.stdout.columns ?? 120) - 1))}`);
      else console.log(line);
      last = line;
    }
    if (Date.now() > deadline) throw new UpgradeCommandError(`the update did not complete within ${Math.round(timeoutMs / 1000)}s; it goes on — run 'bosun adm upgrade' to see where it is`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A pool still rolling its config: not paused, with nodes, not all of them updated to it. */
export function poolBehind(pool: MachineConfigPool): boolean {
  const st = pool.status ?? {};
  if (pool.spec?.paused || !((st.machineCount ?? 0) > 0)) return false;
  return st.configuration?.name !== pool.spec?.configuration?.name || st.updatedMachineCount !== st.machineCount || cond(pool, 'Updated')?.status !== 'True';
}

/**
 * After the ClusterVersion completes (which, as OpenShift's, waits for the master pool only): the
 * other pools rolling the release's configs, until every pool's nodes run them (paused pools are
 * left out, as `oc adm upgrade status` excludes them).
 */
async function followPools(api: KubeClient, deadline: number): Promise<void> {
  let last = '';
  for (;;) {
    let pools: MachineConfigPool[];
    try {
      pools = (await api.list(resources.machineConfigPools)).items ?? [];
    } catch (e) {
      if (isNotFound(e)) return; // no machine-config kinds: nothing rolls over nodes
      throw e;
    }
    const behind = pools.filter(poolBehind);
    if (behind.length === 0) return;
    const line = `Waiting for the machine config pools: ${behind.map((p) => `${p.metadata.name} ${p.status?.updatedMachineCount ?? 0}/${p.status?.machineCount} nodes updated`).join(', ')}`;
    if (line !== last) console.log(line);
    last = line;
    if (Date.now() > deadline) throw new UpgradeCommandError(`the machine config pools did not finish within the timeout; they go on — run 'kubectl get mcp' to see where they are`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export function registerClusterUpgrade(upgrade: Command): void {
  upgrade
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster service account)')
    .option('--include-not-recommended', 'also list updates with known risks')
    .option('--to <version>', 'update to this version (one of the available updates)')
    .option('--to-latest', 'update to the newest recommended version')
    .option('--to-image <pullspec>', 'update to this release image (by digest)')
    .option('--allow-not-recommended', 'allow a conditional update whose risks apply or are unknown')
    .option('--allow-explicit-upgrade', 'allow --to-image to name a release the update service does not offer')
    .option('--force', 'let the cluster-version operator take the release despite failed preconditions (recorded as accepted risks)')
    .option('--wait', 'follow the update until it completes — the ClusterVersion, with a progress bar that never goes back (it shows the furthest the update has got, and says when the operator\'s sync pass is retried), then every machine config pool\'s nodes — or fails')
    .option('--timeout <seconds>', 'with --wait: give up waiting after this long', '1800')
    .addHelpText(
      'after',
      `
Examples:
  bosun adm upgrade                      # the cluster's update state and recommended updates
  bosun adm upgrade --to 1.0.1 --wait    # update, following the progress
  bosun adm upgrade --to-latest
  bosun adm upgrade --to-image bosun.local/release@sha256:… --allow-explicit-upgrade
  bosun adm upgrade channel fast-1.1`,
    )
    .action(async (opts: TargetRequest & { kubeconfig?: string; includeNotRecommended?: boolean; wait?: boolean; timeout: string }) => {
      const api = client(opts.kubeconfig);
      const cv = await readCV(api);
      if (!opts.to && !opts.toLatest && !opts.toImage) {
        console.log(renderUpgradeStatus(cv, Boolean(opts.includeNotRecommended)));
        return;
      }
      const target = chooseTarget(cv, opts);
      await patchSpec(api, (spec) => ({ ...spec, desiredUpdate: target }));
      console.log(`Requested update to ${target.version ?? target.image}${target.force ? ' (forced)' : ''}`);
      if (opts.wait) await follow(api, target.image, Number(opts.timeout) * 1000);
    });

  upgrade
    .command('channel <name>')
    .description('set the update channel (it must be one the current release is in, unless --allow-explicit-channel)')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster service account)')
    .option('--allow-explicit-channel', 'set a channel the current release does not list')
    .action(async (name: string, _opts: unknown, command: Command) => {
      // --kubeconfig is an option of `adm upgrade` too, which takes it wherever it stands.
      const opts = command.optsWithGlobals<{ kubeconfig?: string; allowExplicitChannel?: boolean }>();
      const api = client(opts.kubeconfig);
      const cv = await readCV(api);
      const channels: string[] = cv.status?.desired?.channels ?? [];
      if (!channels.includes(name) && !opts.allowExplicitChannel) {
        throw new UpgradeCommandError(`the channel "${name}" is not one of the channels of the current release (${channels.length ? channels.join(', ') : 'none known'}); pass --allow-explicit-channel to use it anyway`);
      }
      await patchSpec(api, (spec) => ({ ...spec, channel: name }));
      console.log(`Channel set to ${name}`);
    });
}
