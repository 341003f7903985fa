// The certificate a component's HTTPS endpoint serves: from files (--tls-cert-file and
// --tls-private-key-file, on a cluster the service CA's Secret mounted into the pod), read again
// whenever they change — a renewed Secret reaches the running process without a restart, as
// controller-runtime's certwatcher does — or, with no files, a self-signed certificate made at
// start (controller-runtime's secure metrics do the same), so an endpoint is never plain HTTP.
//
//   const certificate = await ServingCertificate.load(files, ['127.0.0.1']);
//   const server = https.createServer({ ...certificate.current() });
//   certificate.onChange((pair) => server.setSecureContext(pair));   // polled every 10 s
//   certificate.close();
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { logger } from '../common/log.js';
import { podPath } from '../common/pod-path.js';

export interface ServingCertificateFiles {
  certFile: string;
  keyFile: string;
}

export interface CertificatePair {
  cert: string;
  key: string;
}

const log = logger('serving-certificate');

function readPair(files: ServingCertificateFiles): CertificatePair {
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(podPath(file), 'utf8');
    } catch (e) {
      throw new Error(`cannot read ${flag} ${file}: ${(e as Error).message}`);
    }
  };
  const pair = { cert: read(files.certFile, '--tls-cert-file'), key: read(files.keyFile, '--tls-private-key-file') };
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new Error(`--tls-cert-file ${files.certFile} and --tls-private-key-file ${files.keyFile} are not a certificate and its key: ${(e as Error).message}`);
  }
  return pair;
}

export class ServingCertificate {
  private listeners: Array<(pair: CertificatePair) => void> = [];
  private timer?: NodeJS.Timeout;

  private constructor(
    private pair: CertificatePair,
    /** Where it comes from; undefined: self-signed. */
    readonly files: ServingCertificateFiles | undefined,
    reloadIntervalMs: number,
  ) {
    if (files) {
      this.timer = setInterval(() => this.reload(), reloadIntervalMs);
      this.timer.unref();
    }
  }

  /** From the files, or self-signed for `hosts` (names and addresses) when none are given. */
  static async load(files: ServingCertificateFiles | undefined, hosts: string[], options: { reloadIntervalMs?: number } = {}): Promise<ServingCertificate> {
    if (files) return new ServingCertificate(readPair(files), files, options.reloadIntervalMs ?? 10_000);
    // Imported only here: the X.509 library is some 200 modules a component serving its files never needs.
    const { createCA, issueServingCert } = await import('../common/pki.js');
    const ca = await createCA(`self-signed@${Math.floor(Date.now() / 1000)}`);
    const serving = await issueServingCert(ca, hosts[0] ?? 'localhost', [...new Set([...hosts, 'localhost'])]);
    return new ServingCertificate({ cert: serving.certPem + ca.certPem, key: serving.keyPem }, undefined, 0);
  }

  get selfSigned(): boolean {
    return !this.files;
  }

  current(): CertificatePair {
    return this.pair;
  }

  onChange(listener: (pair: CertificatePair) => void): void {
    this.listeners.push(listener);
  }

  /** Reads the files again; a change that is a valid pair replaces the served one. */
  reload(): void {
    if (!this.files) return;
    let next: CertificatePair;
    try {
      next = readPair(this.files);
    } catch (e) {
      // Mid-update (one file written, not the other) or removed: keep serving the last good pair.
      log.warn({ err: (e as Error).message }, 'serving certificate not reloaded; keeping the current one');
      return;
    }
    if (next.cert === this.pair.cert && next.key === this.pair.key) return;
    this.pair = next;
    log.info({ certFile: this.files.certFile }, 'serving certificate reloaded');
    for (const listener of this.listeners) listener(next);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.listeners = [];
  }
}
