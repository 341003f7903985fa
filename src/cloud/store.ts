// The local cloud's state on disk: one SQLite database in the data directory (WAL, synchronous
// FULL), so that instances, load balancers and routes survive a restart or a crash. Every
// operation that validates and then writes runs inside one transaction, so a request either
// leaves everything it meant to change or nothing.
import Database from 'better-sqlite3';
import { ensurePrivateStore } from '../common/private-files.js';
import { dirname } from 'node:path';
import type { Instance, LoadBalancer, Route } from './types.js';

type Kind = 'instance' | 'loadbalancer' | 'route';

/** The objects of one kind, keyed by id (instances) or name (balancers, routes). */
export class Collection<T> {
  constructor(private readonly db: Database.Database, private readonly kind: Kind) {}

  get(key: string): T | undefined {
    const row = this.db.prepare('SELECT doc FROM objects WHERE kind = ? AND key = ?').get(this.kind, key) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as T) : undefined;
  }

  list(): T[] {
    const rows = this.db.prepare('SELECT doc FROM objects WHERE kind = ? ORDER BY seq').all(this.kind) as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as T);
  }

  put(key: string, value: T): void {
    this.db.prepare('INSERT INTO objects (kind, key, doc) VALUES (?, ?, ?) ON CONFLICT (kind, key) DO UPDATE SET doc = excluded.doc')
      .run(this.kind, key, JSON.stringify(value));
  }

  delete(key: string): boolean {
    return this.db.prepare('DELETE FROM objects WHERE kind = ? AND key = ?').run(this.kind, key).changes > 0;
  }
}

export class CloudStore {
  private readonly db: Database.Database;
  readonly instances: Collection<Instance>;
  readonly loadBalancers: Collection<LoadBalancer>;
  readonly routes: Collection<Route>;

  constructor(file: string) {
    // Instances' user data (bootstrap tokens) is in here: 0600 in a 0700 directory (private-files.ts).
    ensurePrivateStore(file, dirname(file));
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    // seq keeps listing in creation order (EC2 lists oldest first).
    this.db.exec('CREATE TABLE IF NOT EXISTS objects (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL, UNIQUE (kind, key))');
    this.instances = new Collection<Instance>(this.db, 'instance');
    this.loadBalancers = new Collection<LoadBalancer>(this.db, 'loadbalancer');
    this.routes = new Collection<Route>(this.db, 'route');
  }

  /** Runs fn in one transaction: a throw rolls back everything it wrote. */
  transaction<R>(fn: () => R): R {
    return this.db.transaction(fn)();
  }

  close(): void {
    this.db.close();
  }
}
