// The machine-config server's config source in a cluster: informers on MachineConfigPools and
// MachineConfigs; a pool's config is the rendered MachineConfig its spec.configuration names (the
// render controller's target for the pool), parsed once per version of that object so the
// server's body cache stays warm across requests. A rendered config that does not parse is
// logged and the pool keeps the last one that did.
import { logger } from '../../common/log.js';
import { KubeClient } from '../../kube/client.js';
import { InformerFactory, type Informer } from '../../kube/informer.js';
import { resources } from '../../kube/resources.js';
import { parseConfig } from '../../ignition/parse.js';
import type { KubeConfigLike } from '../../kube/kubeconfig.js';
import type * as api from '../../api/index.js';
import type { RenderedConfig, RenderedConfigSource } from './rendered-config-source.js';

const log = logger('machine-config-server');

export class ApiRenderedConfigSource implements RenderedConfigSource {
  private readonly factory: InformerFactory;
  private readonly pools: Informer<api.MachineConfigPool>;
  private readonly configs: Informer<api.MachineConfig>;
  /** Parsed configs by rendered name, with the resourceVersion they were parsed from. */
  private readonly parsed = new Map<string, { resourceVersion: string; rendered: RenderedConfig }>();

  /** From a kubeconfig (informers of its own, started by start()) or a manager's informers. */
  constructor(from: KubeConfigLike | InformerFactory) {
    this.factory = from instanceof InformerFactory ? from : new InformerFactory(new KubeClient(from));
    this.pools = this.factory.forResource(resources.machineConfigPools);
    this.configs = this.factory.forResource(resources.machineConfigs);
    this.configs.on((type, mc) => {
      if (type === 'delete') this.parsed.delete(mc.metadata.name);
    });
  }

  /** Starts watching; resolves once both caches are filled. */
  async start(signal: AbortSignal): Promise<void> {
    this.factory.start(signal);
    await this.waitForSync(signal);
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([this.pools.waitForSync(signal), this.configs.waitForSync(signal)]);
  }

  get(pool: string): RenderedConfig | undefined {
    const object = this.pools.get(pool);
    if (!object) return undefined;
    const name: string | undefined = object.spec?.configuration?.name || object.status?.configuration?.name;
    if (!name) return undefined;
    const mc = this.configs.get(name);
    const cached = this.parsed.get(name);
    if (!mc) return cached?.rendered;
    const resourceVersion = mc.metadata.resourceVersion ?? '';
    if (cached?.resourceVersion === resourceVersion) return cached.rendered;
    try {
      const rendered = { name, config: parseConfig(mc.spec?.config ?? {}).config };
      this.parsed.set(name, { resourceVersion, rendered });
      return rendered;
    } catch (e) {
      log.error({ pool, config: name, err: (e as Error).message }, 'the rendered config does not parse; serving the last good one');
      return cached?.rendered;
    }
  }

  poolNames(): string[] {
    return this.pools.list().map((p) => p.metadata.name).sort();
  }
}
