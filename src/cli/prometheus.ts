// `bosun prometheus`: the image bosun.local/prometheus — Debian's /usr/bin/prometheus run with the
// configuration the monitoring operator writes, reloaded when it changes (src/monitoring/prometheus-runner.ts).
import type { Command } from 'commander';

interface Options {
  configFile: string;
  storagePath: string;
  listen: string;
  binary: string;
  retention: string;
  pollInterval: string;
}

export function register(program: Command): void {
  program
    .command('prometheus')
    .description("run Debian's Prometheus with the monitoring operator's configuration, reloading it when it changes")
    .option('--config-file <path>', "Prometheus's configuration (in a pod: the pod's path)", '/etc/prometheus/config/prometheus.yaml')
    .option('--storage-path <dir>', 'the TSDB directory', '/prometheus')
    .option('--listen <host:port>', 'where Prometheus serves its UI and HTTP API', '127.0.0.1:9090')
    .option('--binary <path>', 'the Prometheus binary', '/usr/bin/prometheus')
    .option('--retention <duration>', 'how long samples are kept', '1d')
    .option('--poll-interval <ms>', 'how often the configuration and rule files are checked for changes', '2000')
    .addHelpText('after', `
In a pod ($BOSUN_IN_CLUSTER_ROOT set) the configuration's file paths are the pod's and are mapped
into its sandbox. A scrape job whose CA or token file is missing is left out until it appears.
Changes to the configuration, its rule files or referenced files reload Prometheus (SIGHUP).

Example:
  $ bosun prometheus --config-file prometheus.yaml --storage-path /tmp/prom --listen 127.0.0.1:9090`)
    .action(async (o: Options) => {
      const pollMs = Number(o.pollInterval);
      if (!Number.isInteger(pollMs) || pollMs < 100) throw new Error(`--poll-interval must be milliseconds (100 or more), got "${o.pollInterval}"`);
      const { PrometheusRunner } = await import('../monitoring/prometheus-runner.js');
      const runner = new PrometheusRunner({
        configFile: o.configFile, storagePath: o.storagePath, listen: o.listen, binary: o.binary, retention: o.retention, pollMs,
        root: process.env.BOSUN_IN_CLUSTER_ROOT || undefined,
      });
      runner.start();
      const stop = () => void runner.stop();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      process.exit(await runner.exited);
    });
}
