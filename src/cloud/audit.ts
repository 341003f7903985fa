// The cloud's own audit log: one JSON line per authenticated request, allowed or refused — when,
// who (identity and key id; null when the credential was missing or unknown), which action, the
// request and the status answered. In cloud/audit.log (0600) in the data directory, appended
// synchronously so that a crash loses no line already answered.
import { chmodSync, closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface AuditRecord {
  time: string;
  identity: string | null;
  keyId: string | null;
  action: string;
  method: string;
  path: string;
  status: number;
  remote: string;
}

export function auditLogFile(dataDir: string): string {
  return join(dataDir, 'cloud', 'audit.log');
}

export class CloudAuditLog {
  private fd: number | undefined;

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.fd = openSync(file, 'a', 0o600);
    chmodSync(file, 0o600);
  }

  record(entry: AuditRecord): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
