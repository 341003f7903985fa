// `bosun update-service`: the Cincinnati-compatible update service over a graph-data directory
// and a release store (and optionally a signature store).
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';
import { exitOnSignals } from './signals.js';


export function register(program: Command): void {
  program
    .command('update-service')
    .description('serve the update graph (Cincinnati API), release payloads and signatures over HTTP')
    .requiredOption('--graph-data <dir>', 'graph data: channels/*.yaml and blocked-edges/*.yaml')
    .requiredOption('--releases <dir>', 'release store (sha256=<hex>/release-manifests/release-metadata …)')
    .option('--signatures <dir>', 'signature store (sha256=<hex>/signature-<n>), served under /signatures')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8080')
    .addHelpText(
      'after',
      `
Routes:
  GET /api/upgrades_info/v1/graph?channel=C[&arch=A]   the channel's graph (Cincinnati v1)
  GET /releases, /releases/sha256=<hex>/[path]          release payloads
  GET /signatures/sha256=<hex>/signature-<n>            signatures (a signature store URL)
Changes to --graph-data or --releases are picked up without a restart.

Example:
  bosun update-service --graph-data release-payload --releases .bosun/releases --listen 127.0.0.1:8080
  curl -H 'Accept: application/json' 'http://127.0.0.1:8080/api/upgrades_info/v1/graph?channel=stable-1.0'`,
    )
    .action(async (opts: { graphData: string; releases: string; signatures?: string; listen: string }) => {
      let service;
      try {
        const { host, port } = parseHostPort(opts.listen, '--listen');
        const { startUpdateService } = await import('../update-service/server.js');
        service = await startUpdateService({ graphData: opts.graphData, releases: opts.releases, signatures: opts.signatures, host, port });
      } catch (err) {
        console.error(`error: ${(err as Error).message}`);
        process.exit(1);
      }
      exitOnSignals(() => service.close());
      console.log(`update service listening on ${service.url}`);
    });
}
