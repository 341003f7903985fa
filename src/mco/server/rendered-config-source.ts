// Where the machine-config server gets each pool's rendered config. The server only needs
// `get(pool)`; the API-backed source (watching MachineConfigPools and rendered MachineConfigs)
// implements the same interface. FileRenderedConfigSource reads a directory of `<pool>.json`
// files, each a rendered MachineConfig object, and reloads when the directory changes.
import { readdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../ignition/parse.js';
import type { IgnitionConfig } from '../../ignition/types.js';
import { logger } from '../../common/log.js';

export interface RenderedConfig {
  /** The rendered MachineConfig's name, e.g. rendered-worker-5f3a…; written into node annotations. */
  name: string;
  config: IgnitionConfig;
}

export interface RenderedConfigSource {
  /** The pool's target rendered config, or undefined when the pool is unknown. The server caches
   *  serialized bodies per returned object, so return the same object until it changes. */
  get(pool: string): RenderedConfig | undefined;
  /** Resolves once the source knows every pool (the server listens only then). */
  waitForSync?(signal?: AbortSignal): Promise<void>;
  /** Stops watching. */
  close?(): void;
}

const log = logger('machine-config-server');

/** Parses one rendered MachineConfig object (JSON text); throws with the reason when invalid. */
export function renderedConfigFromMachineConfig(text: string): RenderedConfig {
  const mc = JSON.parse(text) as { kind?: string; metadata?: { name?: string }; spec?: { config?: unknown } };
  if (mc.kind !== undefined && mc.kind !== 'MachineConfig') throw new Error(`kind is ${mc.kind}, expected MachineConfig`);
  const name = mc.metadata?.name;
  if (!name) throw new Error('metadata.name is missing');
  if (!mc.spec?.config) throw new Error('spec.config is missing');
  return { name, config: parseConfig(mc.spec.config).config };
}

export class FileRenderedConfigSource implements RenderedConfigSource {
  private configs = new Map<string, RenderedConfig>();
  private watcher: FSWatcher | undefined;
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly dir: string) {
    this.reload();
  }

  get(pool: string): RenderedConfig | undefined {
    return this.configs.get(pool);
  }

  pools(): string[] {
    return [...this.configs.keys()].sort();
  }

  /** Re-reads the directory; a file that fails to parse keeps its pool's previous config. */
  reload(): void {
    const next = new Map<string, RenderedConfig>();
    for (const file of readdirSync(this.dir).filter((f) => f.endsWith('.json'))) {
      const pool = file.slice(0, -'.json'.length);
      try {
        const text = readFileSync(join(this.dir, file), 'utf8');
        const previous = this.configs.get(pool);
        const parsed = renderedConfigFromMachineConfig(text);
        // Keep the same object when nothing changed so the server's body cache stays warm.
        next.set(pool, previous && JSON.stringify(previous) === JSON.stringify(parsed) ? previous : parsed);
      } catch (e) {
        log.error({ pool, file: join(this.dir, file), err: (e as Error).message }, 'cannot load rendered config');
        const previous = this.configs.get(pool);
        if (previous) next.set(pool, previous);
      }
    }
    this.configs = next;
  }

  /** Reloads shortly after any change in the directory, until close(). */
  watch(): this {
    this.watcher = watch(this.dir, () => {
      clearTimeout(this.reloadTimer);
      this.reloadTimer = setTimeout(() => this.reload(), 100);
    });
    return this;
  }

  close(): void {
    clearTimeout(this.reloadTimer);
    this.watcher?.close();
  }
}
