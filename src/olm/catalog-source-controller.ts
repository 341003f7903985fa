// The catalog operator's CatalogSource controller: reads each CatalogSource's catalog (catalogs.ts)
// and says how it is in its status, as OLM does — connectionState.lastObservedState READY when the
// catalog parses and validates, TRANSIENT_FAILURE otherwise with `reason` and a `message` naming
// the bad blob; configMapReference follows the ConfigMap read. The ConfigMap is watched, so an edit
// is seen at once; updateStrategy.registryPoll.interval also reads it again on that period.
import type * as api from '../api/index.js';
import { Controller, resources, rfc3339 } from '../kube/index.js';
import type { CatalogContext } from './catalogs.js';
import { writeStatus } from './status.js';

/** A Go duration such as 10m, 1h30m, 45s in milliseconds; undefined when it is not one. */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]], 0);
}

export function catalogSourceController(ctx: CatalogContext): Controller {
  const sources = ctx.informer(resources.catalogSources);
  const configMaps = ctx.informer(resources.configMaps);
  const controller = new Controller({ name: 'catalog-source-controller', clock: ctx.clock, sync });
  controller.watch(sources);
  controller.watch(configMaps, (cm) => sources.list().filter((s) => s.metadata.namespace === cm.metadata.namespace && s.spec.configMap === cm.metadata.name).map((s) => `${s.metadata.namespace}/${s.metadata.name}`));
  return controller;

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const source = sources.get(name, namespace);
    if (!source) return;
    const state = ctx.catalogs.state(source, (cm) => configMaps.get(cm, namespace));
    const now = rfc3339(new Date(ctx.clock.now()));
    const previous = source.status;
    const observed = state.ready ? 'READY' : 'TRANSIENT_FAILURE';
    const status: api.CatalogSourceStatus = {
      connectionState: {
        lastObservedState: observed,
        lastConnect: previous?.connectionState?.lastObservedState === observed && previous.connectionState.lastConnect ? previous.connectionState.lastConnect : now,
      },
      ...(state.ready ? {} : { reason: state.reason, message: state.message }),
    };
    if (state.configMap) {
      const cm = state.configMap;
      const same = previous?.configMapReference?.resourceVersion === cm.metadata.resourceVersion;
      status.configMapReference = { name: cm.metadata.name, namespace, resourceVersion: cm.metadata.resourceVersion, uid: cm.metadata.uid, lastUpdateTime: same && previous?.configMapReference?.lastUpdateTime ? previous.configMapReference.lastUpdateTime : now };
    }
    await writeStatus(ctx.client, resources.catalogSources, source, status);
    const poll = parseDuration(source.spec.updateStrategy?.registryPoll?.interval);
    return poll ? { requeueAfterMs: poll } : undefined;
  }
}
