// `bosun prometheus`: runs Debian's /usr/bin/prometheus in a bosun pod, as the Prometheus
// Operator's pod runs prometheus beside prometheus-config-reloader.
//   - The configuration's paths are the pod's (/etc/prometheus/…, /var/run/secrets/…); a bosun
//     pod's files live below its sandbox ($BOSUN_IN_CLUSTER_ROOT), so the configuration is
//     rewritten with every file path mapped there (renderConfig) into the storage directory's
//     sibling `config_out/prometheus.yaml`, which Prometheus runs with.
//   - A scrape job whose CA, certificate, key or credentials file does not exist yet (the service
//     CA's bundle before it is injected) is left out, and logged: Prometheus would refuse the
//     whole configuration. It comes back once the file appears.
//   - Every `pollMs` the configuration, the rule files and the referenced files are read again;
//     when any changed, the configuration is rewritten and Prometheus reloaded (SIGHUP).
//   - SIGTERM stops Prometheus (SIGTERM, then SIGKILL after the grace period) and exits with it;
//     Prometheus exiting on its own ends the wrapper with its exit code, so the pod restarts it.
// States: starting → running ⇄ reloading → stopping → exited.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';

/** The fields of Prometheus's configuration that name files. */
const FILE_FIELDS = new Set(['ca_file', 'cert_file', 'key_file', 'credentials_file', 'bearer_token_file', 'password_file']);

export interface RenderedConfig {
  text: string;
  /** The files Prometheus reads (mapped): a change to any of them means a reload. */
  watched: string[];
  /** Jobs left out, with the missing file. */
  leftOut: Array<{ job: string; file: string }>;
}

/** A pod path → the host's: below `root` when the pod has a sandbox root. */
export function mapPodPath(root: string | undefined, path: string): string {
  return root && path.startsWith('/') ? join(root, path) : path;
}

/** Files matching a simple glob (`*` and `?` in the last path element only, as Prometheus's rule_files use it). */
export function expandGlob(pattern: string): string[] {
  const dir = dirname(pattern);
  const name = basename(pattern);
  if (!/[*?]/.test(name)) return existsSync(pattern) ? [pattern] : [];
  const re = new RegExp(`^${name.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  try {
    return readdirSync(dir).filter((f) => re.test(f) && !f.startsWith('..')).sort().map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** The configuration with its file paths mapped below `root`, jobs whose files are missing left out. */
export function renderConfig(text: string, root: string | undefined, exists: (path: string) => boolean = existsSync): RenderedConfig {
  const config = (parse(text) ?? {}) as Record<string, unknown>;
  if (typeof config !== 'object' || Array.isArray(config)) throw new Error('the configuration is not a YAML mapping');
  const watched: string[] = [];
  const leftOut: RenderedConfig['leftOut'] = [];
  const mapFiles = (node: unknown, missing: string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => mapFiles(n, missing));
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (FILE_FIELDS.has(k) && typeof v === 'string') {
        const mapped = mapPodPath(root, v);
        watched.push(mapped);
        if (!exists(mapped)) missing.push(v);
        out[k] = mapped;
      } else if (k === 'files' && Array.isArray(v)) {
        // file_sd: Prometheus watches these itself.
        out[k] = v.map((f) => (typeof f === 'string' ? mapPodPath(root, f) : f));
      } else out[k] = mapFiles(v, missing);
    }
    return out;
  };
  const jobs: unknown[] = [];
  for (const job of (config.scrape_configs ?? []) as unknown[]) {
    const missing: string[] = [];
    const mapped = mapFiles(job, missing);
    if (missing.length) leftOut.push({ job: String((job as { job_name?: unknown }).job_name), file: missing[0] });
    else jobs.push(mapped);
  }
  const rules = ((config.rule_files ?? []) as unknown[]).map((r) => (typeof r === 'string' ? mapPodPath(root, r) : r));
  for (const r of rules) if (typeof r === 'string') watched.push(...expandGlob(r));
  const rest = mapFiles(Object.fromEntries(Object.entries(config).filter(([k]) => k !== 'scrape_configs' && k !== 'rule_files')), []) as Record<string, unknown>;
  const rendered = { ...rest, rule_files: rules, scrape_configs: jobs };
  return { text: stringify(rendered, { lineWidth: 0 }), watched, leftOut };
}

export interface RunnerOptions {
  configFile: string;
  storagePath: string;
  listen: string;
  binary: string;
  retention: string;
  /** The pod's sandbox root ($BOSUN_IN_CLUSTER_ROOT); undefined outside a pod. */
  root?: string;
  pollMs?: number;
  graceMs?: number;
  log?: (event: Record<string, unknown>, message: string) => void;
  /** Extra prometheus flags. */
  extraArgs?: string[];
}

export class PrometheusRunner {
  private child?: ChildProcess;
  private timer?: NodeJS.Timeout;
  private lastHash = '';
  private readonly configFile: string;
  private readonly storage: string;
  private readonly outFile: string;
  readonly exited: Promise<number>;
  private resolveExit!: (code: number) => void;
  private stopping = false;

  constructor(private readonly o: RunnerOptions) {
    this.configFile = mapPodPath(o.root, o.configFile);
    this.storage = resolve(mapPodPath(o.root, o.storagePath));
    this.outFile = join(dirname(this.storage), `${basename(this.storage)}-config_out`, 'prometheus.yaml');
    this.exited = new Promise((r) => (this.resolveExit = r));
  }

  private log(event: Record<string, unknown>, message: string): void {
    (this.o.log ?? ((e, m) => console.log(JSON.stringify({ ...e, msg: m }))))(event, message);
  }

  /** Renders the configuration; returns whether it changed since the last render. */
  private render(): boolean {
    const text = readFileSync(this.configFile, 'utf8');
    const rendered = renderConfig(text, this.o.root);
    const hash = createHash('sha256');
    hash.update(rendered.text);
    for (const f of rendered.watched) hash.update(`\0${f}\0${existsSync(f) ? readFileSync(f) : ''}`);
    const digest = hash.digest('hex');
    if (digest === this.lastHash) return false;
    this.lastHash = digest;
    for (const l of rendered.leftOut) this.log({ job: l.job, file: l.file }, 'scrape job left out until its file exists');
    mkdirSync(dirname(this.outFile), { recursive: true });
    writeFileSync(this.outFile, rendered.text);
    return true;
  }

  start(): void {
    if (!existsSync(this.o.binary)) throw new Error(`${this.o.binary} is not installed: install Debian's prometheus package (apt-get install prometheus)`);
    if (!existsSync(this.configFile)) throw new Error(`the configuration ${this.configFile} does not exist`);
    mkdirSync(this.storage, { recursive: true });
    this.render();
    const args = [
      `--config.file=${this.outFile}`,
      `--storage.tsdb.path=${this.storage}`,
      `--storage.tsdb.retention.time=${this.o.retention}`,
      `--web.listen-address=${this.o.listen}`,
      '--web.enable-lifecycle',
      ...(this.o.extraArgs ?? []),
    ];
    this.log({ binary: this.o.binary, args }, 'starting prometheus');
    const child = spawn(this.o.binary, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    this.child = child;
    // Prometheus does not outlive the wrapper, however it ends (the pod's processes die with it).
    process.once('exit', () => child.kill('SIGKILL'));
    child.on('error', (e) => {
      this.log({ err: e.message }, 'prometheus could not start');
      this.finish(127);
    });
    child.on('exit', (code, signal) => {
      this.log({ code, signal }, 'prometheus exited');
      this.finish(code ?? (signal ? 128 + 15 : 1));
    });
    this.timer = setInterval(() => this.poll(), this.o.pollMs ?? 2000);
  }

  private poll(): void {
    try {
      if (this.render() && this.child && !this.stopping) {
        this.log({}, 'configuration changed: reloading prometheus');
        this.child.kill('SIGHUP');
      }
    } catch (e) {
      this.log({ err: (e as Error).message }, 'cannot read the configuration; keeping the running one');
    }
  }

  private finish(code: number): void {
    clearInterval(this.timer);
    this.resolveExit(code);
  }

  async stop(): Promise<number> {
    this.stopping = true;
    clearInterval(this.timer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), this.o.graceMs ?? 30_000);
      await this.exited;
      clearTimeout(kill);
    }
    return this.exited;
  }
}
