// Who may call the local cloud: identities, each with the actions it may perform (actions.ts) and
// one bearer credential, `<key id>.<secret>`. The cloud keeps only the secret's SHA-256, in its
// own SQLite file (credentials.db, mode 0600, beside state.db), and compares hashes with
// crypto.timingSafeEqual, so neither a copy of the file nor the time a comparison takes gives a
// secret away. A bearer secret rather than a signed request: a signature (HMAC, as AWS's SigV4)
// needs the cloud to hold the secret itself to check it, where a bearer secret can be stored
// hashed — and every caller reaches the cloud over loopback, where nothing sits in between to
// replay a request.
//
// The root identity (`root`, every action) is made the first time the cloud starts on a data
// directory and its credential written to cloud/root.credential (0600): the installer's, and what
// `bosun cloud …` uses; the cloud-credential controller mints the components' narrower ones with it.
import Database from 'better-sqlite3';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ALL_ACTIONS, ROOT_ONLY_ACTIONS, isCloudAction } from './actions.js';
import { conflict, invalid, notFound } from './errors.js';

export const ROOT_IDENTITY = 'root';

/** An identity as the API shows it: never its secret. */
export interface CloudIdentity { name: string; actions: string[]; keyId: string; createdAt: string; updatedAt: string }

/** A credential as issued: the only time its secret is shown. */
export interface IssuedCredential { identity: CloudIdentity; credential: string }

interface Row { name: string; actions: string; key_id: string; secret_hash: Buffer; created_at: string; updated_at: string }

const NAME_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const KEY_ID_RE = /^BCK[0-9A-F]{16}$/;

export function credentialsFile(dataDir: string): string {
  return join(dataDir, 'cloud', 'credentials.db');
}

const hashOf = (secret: string) => createHash('sha256').update(secret).digest();

/** Splits `<key id>.<secret>`; undefined when it is not one. */
export function parseCredential(text: string): { keyId: string; secret: string } | undefined {
  const dot = text.indexOf('.');
  if (dot < 0) return undefined;
  const keyId = text.slice(0, dot);
  const secret = text.slice(dot + 1);
  return KEY_ID_RE.test(keyId) && secret.length > 0 ? { keyId, secret } : undefined;
}

/** Creates `file` empty with mode 0600 when missing, and makes an existing one 0600. */
function privateFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
}

export class CredentialStore {
  private readonly db: Database.Database;
  /** Compared against when the key id is unknown, so that a miss costs what a hit does. */
  private readonly decoy = hashOf(randomBytes(32).toString('base64url'));

  constructor(readonly file: string) {
    // SQLite gives the -wal and -shm files the database file's mode.
    privateFile(file);
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec('CREATE TABLE IF NOT EXISTS identities (name TEXT PRIMARY KEY, actions TEXT NOT NULL, key_id TEXT NOT NULL UNIQUE, secret_hash BLOB NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)');
    for (const suffix of ['-wal', '-shm']) if (existsSync(file + suffix)) chmodSync(file + suffix, 0o600);
  }

  /** The identity a bearer credential belongs to, or undefined (unknown key, wrong secret, not a credential). */
  authenticate(credential: string): CloudIdentity | undefined {
    const parsed = parseCredential(credential.trim());
    const row = parsed ? (this.db.prepare('SELECT * FROM identities WHERE key_id = ?').get(parsed.keyId) as Row | undefined) : undefined;
    const given = hashOf(parsed?.secret ?? credential);
    const ok = timingSafeEqual(given, row ? row.secret_hash : this.decoy);
    return ok && row ? toIdentity(row) : undefined;
  }

  list(): CloudIdentity[] {
    return (this.db.prepare('SELECT * FROM identities ORDER BY name').all() as Row[]).map(toIdentity);
  }

  get(name: string): CloudIdentity {
    const row = this.db.prepare('SELECT * FROM identities WHERE name = ?').get(name) as Row | undefined;
    if (!row) throw notFound('NoSuchEntity', `no identity named "${name}"`);
    return toIdentity(row);
  }

  /** Creates the identity with a new credential, or sets an existing one's actions (its credential kept). */
  put(name: string, body: unknown): { identity: CloudIdentity; credential?: string } {
    checkName(name);
    const actions = validActions(body);
    if (name === ROOT_IDENTITY) throw conflict('RootIdentity', `the root identity's actions are fixed (${ALL_ACTIONS})`);
    return this.db.transaction(() => {
      const existing = this.db.prepare('SELECT * FROM identities WHERE name = ?').get(name) as Row | undefined;
      if (!existing) return this.issue(name, actions);
      this.db.prepare('UPDATE identities SET actions = ?, updated_at = ? WHERE name = ?').run(JSON.stringify(actions), new Date().toISOString(), name);
      return { identity: this.get(name) };
    })();
  }

  /** A new credential for the identity; the old one stops working at once. */
  rotate(name: string): IssuedCredential {
    const identity = this.get(name);
    return this.issue(name, identity.actions);
  }

  delete(name: string): CloudIdentity {
    if (name === ROOT_IDENTITY) throw conflict('RootIdentity', 'the root identity cannot be deleted');
    const identity = this.get(name);
    this.db.prepare('DELETE FROM identities WHERE name = ?').run(name);
    return identity;
  }

  /** The root credential in `file` (0600), made (or made again, when the file is gone or no longer valid) as needed. */
  ensureRoot(file: string): string {
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8').trim();
      if (this.authenticate(text)?.name === ROOT_IDENTITY) {
        chmodSync(file, 0o600);
        return text;
      }
    }
    const { credential } = this.issue(ROOT_IDENTITY, [ALL_ACTIONS]);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, `${credential}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    return credential;
  }

  close(): void {
    this.db.close();
  }

  private issue(name: string, actions: string[]): IssuedCredential {
    const keyId = `BCK${randomBytes(8).toString('hex').toUpperCase()}`;
    const secret = randomBytes(32).toString('base64url');
    const now = new Date().toISOString();
    this.db.prepare(`INSERT INTO identities (name, actions, key_id, secret_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET actions = excluded.actions, key_id = excluded.key_id, secret_hash = excluded.secret_hash, updated_at = excluded.updated_at`)
      .run(name, JSON.stringify(actions), keyId, hashOf(secret), now, now);
    return { identity: this.get(name), credential: `${keyId}.${secret}` };
  }
}

function toIdentity(row: Row): CloudIdentity {
  return { name: row.name, actions: JSON.parse(row.actions) as string[], keyId: row.key_id, createdAt: row.created_at, updatedAt: row.updated_at };
}

function checkName(name: string): void {
  if (name.length > 253 || !NAME_RE.test(name)) throw invalid('InvalidParameter', `invalid identity name "${name}": lower-case letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters`);
}

function validActions(body: unknown): string[] {
  const actions = (body as { actions?: unknown } | null)?.actions;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || Object.keys(body).some((k) => k !== 'actions')) {
    throw invalid('InvalidParameter', 'the body must be a JSON object {"actions": [...]}');
  }
  if (!Array.isArray(actions) || actions.some((a) => typeof a !== 'string')) throw invalid('InvalidParameter', '"actions" must be a list of action names');
  const names = actions as string[];
  const reserved = names.filter((a) => ROOT_ONLY_ACTIONS.includes(a));
  if (reserved.length) throw invalid('InvalidAction', `${reserved.map((a) => `"${a}"`).join(', ')} is the root identity's alone`);
  const unknown = names.filter((a) => !isCloudAction(a));
  if (unknown.length) throw invalid('InvalidAction', `unknown action${unknown.length > 1 ? 's' : ''} ${unknown.map((a) => `"${a}"`).join(', ')}`);
  return [...new Set(names)].sort();
}
