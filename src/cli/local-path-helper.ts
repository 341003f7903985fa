// `bosun local-path-helper`: what the bosun.io/local-path provisioner's helper pods run on a node
// (src/cluster/storage/local-path-provisioner.ts), as rancher's helper pods run a shell script.
import type { Command } from 'commander';
import { deleteVolumeDirectory } from '../cluster/storage/local-path-helper.js';

export function register(program: Command): void {
  const helper = program
    .command('local-path-helper')
    .description("the bosun.io/local-path provisioner's helper: run in a pod on a volume's node, with the provisioner's directory mounted at /data");
  helper
    .command('delete')
    .description("delete a released volume's directory")
    .requiredOption('--path <dir>', 'the directory, as the pod sees it: /data/<volume>_<namespace>_<claim>')
    .action((opts: { path: string }) => {
      console.log(`deleted ${deleteVolumeDirectory(opts.path)}`);
    });
}
