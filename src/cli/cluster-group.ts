// `bosun cluster`: workload clusters, as clusterctl manages them. The group is shared: each command
// file attaches its subcommands through clusterGroup().
import type { Command } from 'commander';

/** The `cluster` command group of program, created on first use. */
export function clusterGroup(program: Command): Command {
  return program.commands.find((c) => c.name() === 'cluster')
    ?? program.command('cluster').description('workload clusters (as clusterctl): generate, describe, get kubeconfig, move, versions');
}
