// The audit trail: one structured line per request that changes something (who, verb, resource,
// namespace, name, result code, user agent, request id), logged through pino and, when a file is
// given, appended as JSON lines (by default `<data dir>/audit.log`) so an administrator can answer
// "who changed this" with grep or jq. `enableAudit` attaches it to a running API server.
import fs from 'node:fs';
import path from 'node:path';
import { logger as componentLogger, type Logger } from '../../common/log.js';
import type { RequestAttributes, UserInfo } from '../auth/request-attributes.js';
import type { ApiServer } from '../server.js';

export interface AuditEvent {
  time: string;
  requestId: string;
  user: string;
  groups: string[];
  /** The user the request ran as, when it impersonated one (kubectl --as). */
  impersonatedUser?: { username: string; groups: string[] };
  verb: string;
  /** `pods`, `deployments.apps`, `pods/eviction` …; for non-resource requests the path. */
  resource: string;
  namespace?: string;
  name?: string;
  code: number;
  userAgent: string;
}

const MUTATING_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function isMutating(verb: string): boolean {
  return MUTATING_VERBS.has(verb);
}

/** The audit record of a finished request. */
export function auditEvent(attrs: RequestAttributes, result: { code: number; userAgent?: string; requestId: string; time?: Date; impersonatedUser?: UserInfo }): AuditEvent {
  let resource = attrs.path;
  if (attrs.resourceRequest) {
    resource = attrs.apiGroup === '' ? attrs.resource : `${attrs.resource}.${attrs.apiGroup}`;
    if (attrs.subresource !== '') resource += `/${attrs.subresource}`;
  }
  const event: AuditEvent = {
    time: (result.time ?? new Date()).toISOString(), requestId: result.requestId,
    user: attrs.user.name, groups: attrs.user.groups, verb: attrs.verb, resource, code: result.code,
    userAgent: result.userAgent ?? '',
  };
  if (result.impersonatedUser) event.impersonatedUser = { username: result.impersonatedUser.name, groups: result.impersonatedUser.groups };
  if (attrs.namespace !== '') event.namespace = attrs.namespace;
  if (attrs.name !== '') event.name = attrs.name;
  return event;
}

export const AUDIT_FILE = 'audit.log';
/** The pods' connect subresources: audited whatever their verb. */
const CONNECTS = new Set(['pods/exec', 'pods/attach', 'pods/portforward']);
/** How long audit lines wait to be written together (close() writes what waits at once). */
const WRITE_INTERVAL_MS = 50;

/** Where audit events go: a pino child logger, and optionally a JSON-lines file. */
export class AuditLog {
  private readonly log: Logger;
  private readonly file?: fs.WriteStream;
  private closing?: Promise<void>;
  /** Lines recorded since the last write to the file. */
  private pending: string[] = [];

  constructor(options: { dataDir?: string; logger?: Logger } = {}) {
    this.log = options.logger ?? componentLogger('audit');
    if (options.dataDir) {
      fs.mkdirSync(options.dataDir, { recursive: true });
      this.file = fs.createWriteStream(path.join(options.dataDir, AUDIT_FILE), { flags: 'a', mode: 0o600 });
      this.file.on('error', (err) => this.log.error({ err }, 'audit file write failed'));
    }
  }

  /**
   * Records a finished request when it changed something (or tried to), and every exec, attach and
   * port-forward (a WebSocket's is a GET); other reads are not audited.
   */
  record(event: AuditEvent): void {
    if (!isMutating(event.verb) && !CONNECTS.has(event.resource)) return;
    if (this.log.isLevelEnabled('info')) {
      this.log.info({ audit: event }, `${event.user}${event.impersonatedUser ? ` as ${event.impersonatedUser.username}` : ''} ${event.verb} ${event.resource}${event.namespace ? ` -n ${event.namespace}` : ''}${event.name ? ` ${event.name}` : ''} → ${event.code}`);
    }
    if (this.closing || !this.file) return;
    // The lines of WRITE_INTERVAL_MS go to the file in one write, not one each: under load a write
    // per turn of the event loop cost the server more than the lines themselves (bench:apiserver).
    this.pending.push(JSON.stringify(event));
    if (this.pending.length === 1) setTimeout(() => this.writePending(), WRITE_INTERVAL_MS);
  }

  private writePending(): void {
    if (this.pending.length === 0) return;
    this.file?.write(`${this.pending.join('\n')}\n`);
    this.pending = [];
  }

  /** Flushes and closes the file. Idempotent. */
  close(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    this.writePending();
    this.closing ??= new Promise((resolve) => file.end(() => resolve()));
    return this.closing;
  }
}

/** Audits every mutating request the server answers, into `<dataDir>/audit.log` and the log. */
export function enableAudit(server: ApiServer, dataDir: string): AuditLog {
  const audit = new AuditLog({ dataDir });
  server.onCompleted((c) => audit.record(auditEvent(c.attributes, { code: c.code, userAgent: c.userAgent, requestId: c.requestId, impersonatedUser: c.impersonatedUser })));
  return audit;
}
