// The CSR signing controller, as kube-controller-manager's csrsigning runs beside kube-apiserver:
// it watches CertificateSigningRequests in the store and, for each one that is Approved, not
// Failed, not yet issued and addressed to a built-in signer (signers.ts), either signs it with
// the cluster CA and writes status.certificate, or marks it Failed (SignerValidationFailure)
// when the request does not fit its signer. Level-triggered: every change of a CSR re-reads it,
// and the store is read afresh at start, so approvals made while the server was down are signed.
import { logger } from '../../common/log.js';
import { signPublicKey, type KeyPair } from '../../common/pki.js';
import { ApiError } from '../errors.js';
import { storageKey } from '../registry/resource-type.js';
import type { ApiServer } from '../server.js';
import { csrHasCondition } from '../kinds/certificatesigningrequests.js';
import { parseCertificateRequest, RequestError, signatureValid, usageBits } from './request.js';
import { isBuiltinSigner, signerRefusal } from './signers.js';
import { rfc3339 } from '../../common/time.js';
import type * as api from '../../api/index.js';

const log = logger('csr-signer');
const PREFIX = '/certificates.k8s.io/certificatesigningrequests/';
const MIN_DURATION_MS = 10 * 60 * 1000;
/** kube-controller-manager's --cluster-signing-duration default: one year. */
export const DEFAULT_CERT_TTL_MS = 365 * 24 * 60 * 60 * 1000;

type CSR = api.CertificateSigningRequest;

export interface SigningController {
  /** Resolves once every CSR changed so far has been handled (for tests and shutdown). */
  idle(): Promise<void>;
  stop(): void;
}

/** How long an issued certificate lives: what the CSR asks for, between ten minutes and the signer's maximum. */
export function certificateDuration(expirationSeconds: unknown, maxMs: number): number {
  if (typeof expirationSeconds !== 'number') return maxMs;
  return Math.min(maxMs, Math.max(MIN_DURATION_MS, expirationSeconds * 1000));
}

/** What to do with one CSR: nothing, fail it with a message, or sign it. */
export async function decide(csr: CSR): Promise<{ action: 'none' } | { action: 'fail'; message: string } | { action: 'sign' }> {
  const signerName = csr.spec?.signerName;
  if (!csrHasCondition(csr, 'Approved') || csrHasCondition(csr, 'Failed') || csr.status?.certificate || !isBuiltinSigner(signerName)) return { action: 'none' };
  let parsed;
  try {
    parsed = parseCertificateRequest(Buffer.from(String(csr.spec.request ?? ''), 'base64').toString('utf8'));
  } catch (e) {
    if (e instanceof RequestError) return { action: 'fail', message: `unable to parse csr: ${e.message}` };
    throw e;
  }
  if (!(await signatureValid(parsed))) return { action: 'fail', message: 'the request is not signed by the key it carries' };
  const refusal = signerRefusal(signerName, parsed, csr.spec.usages ?? []);
  return refusal ? { action: 'fail', message: refusal } : { action: 'sign' };
}

export function enableCsrSigning(server: ApiServer, ca: KeyPair, options: { certTtlMs?: number } = {}): SigningController {
  const { storage, registry, resources } = server;
  const type = registry.lookup('certificates.k8s.io', 'v1', 'certificatesigningrequests')!;
  const maxMs = options.certTtlMs ?? DEFAULT_CERT_TTL_MS;
  const pending = new Set<string>();
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const writeStatus = async (csr: CSR, status: CSR['status']): Promise<void> => {
    await resources.update(type, undefined, csr.metadata.name, { ...csr, status }, { subresource: 'status', fieldManager: 'csr-signer' });
  };

  const handle = async (name: string): Promise<void> => {
    const item = storage.get(storageKey(type, undefined, name));
    if (!item) return;
    const csr = { ...item.object, metadata: { ...item.object.metadata, resourceVersion: String(item.revision) } } as CSR;
    const decision = await decide(csr);
    if (decision.action === 'none') return;
    if (decision.action === 'fail') {
      log.info({ csr: name, signer: csr.spec.signerName, reason: decision.message }, 'CSR refused by its signer');
      const at = rfc3339();
      const failed = { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: decision.message, lastUpdateTime: at, lastTransitionTime: at };
      await writeStatus(csr, { ...(csr.status ?? {}), conditions: [...(csr.status?.conditions ?? []), failed] });
      return;
    }
    const parsed = parseCertificateRequest(Buffer.from(csr.spec.request, 'base64').toString('utf8'));
    const certPem = await signPublicKey(ca, parsed.request.publicKey, {
      subject: parsed.request.subjectName,
      ...usageBits(csr.spec.usages ?? []),
      altNames: [
        ...parsed.dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...parsed.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
        ...parsed.emailAddresses.map((value) => ({ type: 'email' as const, value })),
        ...parsed.uris.map((value) => ({ type: 'url' as const, value })),
      ],
      notAfter: new Date(Date.now() + certificateDuration(csr.spec.expirationSeconds, maxMs)),
    });
    await writeStatus(csr, { ...(csr.status ?? {}), certificate: Buffer.from(certPem).toString('base64') });
    log.info({ csr: name, signer: csr.spec.signerName, subject: parsed.request.subject, requestor: csr.spec.username }, 'CSR signed');
  };

  const drain = async (): Promise<void> => {
    while (pending.size > 0 && !stopped) {
      const [name] = pending;
      pending.delete(name);
      try {
        await handle(name);
      } catch (err) {
        // Someone else wrote the CSR in between: its change event brings it back here.
        if (err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound')) continue;
        log.warn({ csr: name, err }, 'signing a CSR failed');
      }
    }
  };
  const enqueue = (name: string) => {
    pending.add(name);
    running = running.then(drain);
  };

  const listed = storage.list(PREFIX);
  const watcher = storage.watch(PREFIX, listed.revision, (event) => {
    if (event.type !== 'DELETED') enqueue(String(event.object.metadata.name));
  });
  for (const item of listed.items) enqueue(String(item.object.metadata.name));

  return {
    idle: async () => {
      while (pending.size > 0) await running;
      await running;
    },
    stop: () => {
      stopped = true;
      watcher.stop();
    },
  };
}
