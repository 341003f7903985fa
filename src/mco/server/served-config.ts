// What the machine-config server hands a booting machine: the pool's rendered config plus the
// files a new node needs before its daemon runs — node-annotations.json (so the daemon starts
// with currentConfig = desiredConfig = the rendered name, state Done) and the kubelet's bootstrap
// kubeconfig — translated to the negotiated spec version and serialized once per (config,
// version): a boot storm of thousands of fetches reuses the same bytes.
import { mergeConfigs } from '../../ignition/merge.js';
import { encodeDataUrl } from '../../ignition/data-url.js';
import { translateToSpec2, translateToSpec3 } from '../../ignition/translate.js';
import type { IgnitionConfig, FileEntry } from '../../ignition/types.js';
import type { Spec3Minor } from '../../ignition/version.js';
import type { RenderedConfig } from './rendered-config-source.js';

export const NODE_ANNOTATIONS_PATH = '/etc/machine-config-daemon/node-annotations.json';
export const BOOTSTRAP_KUBECONFIG_PATH = '/etc/kubernetes/kubeconfig';

export function nodeAnnotations(renderedName: string): Record<string, string> {
  return {
    'machineconfiguration.openshift.io/currentConfig': renderedName,
    'machineconfiguration.openshift.io/desiredConfig': renderedName,
    'machineconfiguration.openshift.io/state': 'Done',
  };
}

/** The rendered config with the bootstrap files added (still at the rendered config's version). */
export function servedConfig(rendered: RenderedConfig, bootstrapKubeconfig: string | undefined): IgnitionConfig {
  const files: FileEntry[] = [
    { path: NODE_ANNOTATIONS_PATH, mode: 0o644, overwrite: true, contents: { source: encodeDataUrl(JSON.stringify(nodeAnnotations(rendered.name))) } },
  ];
  if (bootstrapKubeconfig !== undefined) {
    files.push({ path: BOOTSTRAP_KUBECONFIG_PATH, mode: 0o600, overwrite: true, contents: { source: encodeDataUrl(bootstrapKubeconfig) } });
  }
  return mergeConfigs(rendered.config, { ignition: { version: rendered.config.ignition.version }, storage: { files } });
}

/** The served config at `version` ("3.N.0" or "2.2.0"); throws TranslationError when it cannot. */
export function translateTo(config: IgnitionConfig, version: string): object {
  if (version === '2.2.0') return translateToSpec2(config);
  return translateToSpec3(config, Number(version.split('.')[1]) as Spec3Minor);
}

/** Serialized bodies per rendered-config object and version; entries die with their objects. */
export class ServedBodyCache {
  private readonly bodies = new WeakMap<RenderedConfig, Map<string, Buffer | Error>>();

  constructor(private readonly bootstrapKubeconfig: string | undefined) {}

  /** The body, or the translation error (cached too, so a bad pool does not cost per request). */
  body(rendered: RenderedConfig, version: string): Buffer | Error {
    let perVersion = this.bodies.get(rendered);
    if (!perVersion) {
      perVersion = new Map();
      this.bodies.set(rendered, perVersion);
    }
    let body = perVersion.get(version);
    if (!body) {
      try {
        body = Buffer.from(JSON.stringify(translateTo(servedConfig(rendered, this.bootstrapKubeconfig), version)));
      } catch (e) {
        body = e as Error;
      }
      perVersion.set(version, body);
    }
    return body;
  }
}
