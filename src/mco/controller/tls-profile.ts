// OpenShift's TLS security profiles (config.openshift.io TLSSecurityProfile: Old, Intermediate,
// Modern — Mozilla's server-side recommendations — or Custom) as the kubelet takes them:
// tlsMinVersion and tlsCipherSuites with IANA names. Profiles list OpenSSL names; suites the
// kubelet (Go's crypto/tls) cannot offer — the DHE ones, the SHA-384 CBC ones — are left out, as
// OpenShift leaves them out; a name that is no cipher suite at all is an error.

export interface TlsSecurityProfile {
  type?: string;
  custom?: { ciphers?: string[] | null; minTLSVersion?: string | null } | null;
}

const TLS13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
const ECDHE_AEAD = ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305'];

export const TLS_PROFILES: Record<string, { minTLSVersion: string; ciphers: string[] }> = {
  Old: {
    minTLSVersion: 'VersionTLS10',
    ciphers: [
      ...TLS13, ...ECDHE_AEAD, 'DHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES256-GCM-SHA384', 'DHE-RSA-CHACHA20-POLY1305',
      'ECDHE-ECDSA-AES128-SHA256', 'ECDHE-RSA-AES128-SHA256', 'ECDHE-ECDSA-AES128-SHA', 'ECDHE-RSA-AES128-SHA',
      'ECDHE-ECDSA-AES256-SHA384', 'ECDHE-RSA-AES256-SHA384', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-RSA-AES256-SHA',
      'DHE-RSA-AES128-SHA256', 'DHE-RSA-AES256-SHA256', 'AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA256',
      'AES256-SHA256', 'AES128-SHA', 'AES256-SHA', 'DES-CBC3-SHA',
    ],
  },
  Intermediate: { minTLSVersion: 'VersionTLS12', ciphers: [...TLS13, ...ECDHE_AEAD, 'DHE-RSA-AES128-GCM-SHA256', 'DHE-RSA-AES256-GCM-SHA384'] },
  Modern: { minTLSVersion: 'VersionTLS13', ciphers: [...TLS13] },
};

/** OpenSSL name → IANA name, for the suites Go offers. */
const IANA: Record<string, string> = {
  'ECDHE-ECDSA-AES128-GCM-SHA256': 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256': 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384': 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384': 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305': 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'ECDHE-RSA-CHACHA20-POLY1305': 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-SHA256': 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
  'ECDHE-RSA-AES128-SHA256': 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
  'ECDHE-ECDSA-AES128-SHA': 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
  'ECDHE-RSA-AES128-SHA': 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
  'ECDHE-ECDSA-AES256-SHA': 'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
  'ECDHE-RSA-AES256-SHA': 'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
  'ECDHE-RSA-DES-CBC3-SHA': 'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA',
  'AES128-GCM-SHA256': 'TLS_RSA_WITH_AES_128_GCM_SHA256',
  'AES256-GCM-SHA384': 'TLS_RSA_WITH_AES_256_GCM_SHA384',
  'AES128-SHA256': 'TLS_RSA_WITH_AES_128_CBC_SHA256',
  'AES128-SHA': 'TLS_RSA_WITH_AES_128_CBC_SHA',
  'AES256-SHA': 'TLS_RSA_WITH_AES_256_CBC_SHA',
  'DES-CBC3-SHA': 'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
  ...Object.fromEntries(TLS13.map((n) => [n, n])),
};
/** Real suites Go does not offer: dropped, not refused. */
const NOT_IN_GO = /^(DHE-|ECDHE-(ECDSA|RSA)-AES256-SHA384$|AES256-SHA256$)/;

export const TLS_VERSIONS = ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'];

export interface KubeletTls { tlsMinVersion: string; tlsCipherSuites: string[] }

/** The kubelet's TLS settings for a profile; throws naming what is wrong. */
export function kubeletTlsFor(profile: TlsSecurityProfile): KubeletTls {
  const type = profile.type ?? 'Intermediate';
  let spec: { minTLSVersion?: string | null; ciphers?: string[] | null } | undefined;
  if (type === 'Custom') {
    spec = profile.custom ?? undefined;
    if (!spec) throw new Error('tlsSecurityProfile: type Custom needs custom.ciphers and custom.minTLSVersion');
  } else {
    spec = TLS_PROFILES[type];
    if (!spec) throw new Error(`tlsSecurityProfile: unknown type "${type}" (expected Old, Intermediate, Modern or Custom)`);
  }
  const min = spec.minTLSVersion ?? '';
  if (!TLS_VERSIONS.includes(min)) throw new Error(`tlsSecurityProfile: minTLSVersion "${min}" is not one of ${TLS_VERSIONS.join(', ')}`);
  const unknown = (spec.ciphers ?? []).filter((c) => !IANA[c] && !NOT_IN_GO.test(c));
  if (unknown.length > 0) throw new Error(`tlsSecurityProfile: unknown cipher ${unknown.map((c) => `"${c}"`).join(', ')}`);
  const suites = (spec.ciphers ?? []).map((c) => IANA[c]).filter((c): c is string => Boolean(c));
  if (suites.length === 0) throw new Error('tlsSecurityProfile: no cipher suite the kubelet can offer');
  return { tlsMinVersion: min, tlsCipherSuites: suites };
}
