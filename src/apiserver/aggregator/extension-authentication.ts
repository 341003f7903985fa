// The ConfigMap kube-system/extension-apiserver-authentication, as kube-apiserver publishes it: how
// an extension API server authenticates what the aggregator sends it — the client CA, and the
// front-proxy CA with the certificate names allowed to set the X-Remote-* headers. Written at
// start (created, or updated when it says something else); extension servers read it with the
// Role extension-apiserver-authentication-reader's rights.
import type * as api from '../../api/index.js';
import { isDeepStrictEqual } from 'node:util';
import type { Registry } from '../registry/registry.js';
import type { Resources } from '../registry/resources.js';
import { asKind } from '../kinds/strategy.js';
import { PROXY_CLIENT_NAME } from '../serving.js';

export const EXTENSION_AUTHENTICATION = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

/** The ConfigMap's data. Pure. */
export function extensionAuthenticationData(clientCaPem: string, frontProxyCaPem: string): Record<string, string> {
  return {
    'client-ca-file': clientCaPem,
    'requestheader-client-ca-file': frontProxyCaPem,
    'requestheader-allowed-names': JSON.stringify([PROXY_CLIENT_NAME]),
    'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
    'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
    'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
  };
}

export async function publishExtensionAuthentication(resources: Resources, registry: Registry, clientCaPem: string, frontProxyCaPem: string): Promise<void> {
  const type = registry.lookup('', 'v1', 'configmaps')!;
  const { namespace, name } = EXTENSION_AUTHENTICATION;
  const data = extensionAuthenticationData(clientCaPem, frontProxyCaPem);
  let live: api.ConfigMap | undefined;
  try {
    live = asKind<api.ConfigMap>(resources.get(type, namespace, name));
  } catch (e) {
    if ((e as { reason?: string }).reason !== 'NotFound') throw e;
  }
  if (live && isDeepStrictEqual(live.data, data)) return;
  const write = live ? resources.update(type, namespace, name, { ...live, data }) : resources.create(type, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
  // Another server sharing the storage wrote it at the same moment: its write stands.
  await write.catch((e: Error) => {
    if (!['AlreadyExists', 'Conflict'].includes((e as { reason?: string }).reason ?? '')) throw e;
  });
}
