// The local cloud's instances: create, describe, start, stop, reboot, terminate, kept in the
// store and acted out on local machines (machine.ts). A request is validated and its new state
// recorded in one transaction before the answer; what takes time (booting, shutting down, a
// reboot's boot delay) happens after, one piece of work at a time per instance:
//
//   create/start → pending ──boot──▶ running          (a failed boot: running, machine Failed)
//   stop         → stopping ──shutdown──▶ stopped
//   reboot       : running ──shutdown, boot delay, boot──▶ running (new boot ID)
//   terminate    : shutdown, machine directory removed, then terminated (answered when done)
//
// After a restart of the cloud, instances that were pending or running boot again and stopping
// ones are stopped: the machines ran inside the process that went away.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { logger, type Logger } from '../common/log.js';
import { allocateAddress, newInstanceId } from './addresses.js';
import { INSTANCE_ADDRESS_PREFIX, REGION, ZONES } from './catalogue.js';
import { invalid, notFound, conflict } from './errors.js';
import { Firmware, createMachineDisk, machineDir, type IgnitionMode } from './firmware.js';
import { DEFAULT_BOOT_DELAY_MS, transition, type Operation } from './lifecycle.js';
import { Machine } from './machine.js';
import { NO_RUNTIME, type MachineRuntime } from './machine-runtime.js';
import { PowerRequestWatcher } from './power-requests.js';
import { parseCreateInstance } from './requests.js';
import { CloudStore } from './store.js';
import { INSTANCE_STATES, type Instance, type InstanceState } from './types.js';

export interface CloudOptions {
  dataDir: string;
  /** How long a rebooting machine stays down (default 3 s). */
  bootDelayMs?: number;
  ignition?: IgnitionMode;
  ignitionBinary?: string;
  /** What runs on a machine once booted (the node agent); nothing by default. */
  runtime?: MachineRuntime;
  /** The first host number instances' addresses are handed out from (127.0.1.N, default 1):
   *  two clouds on one machine with different starts never hand out the same address. */
  firstInstanceHost?: number;
  /** How long terminated instances stay visible (EC2: about an hour). */
  terminatedRetentionMs?: number;
  log?: Logger;
}

export interface InstanceFilter { states?: InstanceState[]; names?: string[]; ids?: string[] }

export class LocalCloud {
  readonly store: CloudStore;
  private readonly firmware: Firmware;
  private readonly runtime: MachineRuntime;
  private readonly machines = new Map<string, Machine>();
  /** Per booted machine, the watch for a reboot or power-off asked from inside it (power-requests.ts). */
  private readonly powerRequests = new Map<string, PowerRequestWatcher>();
  /** Per instance, the tail of its queue of machine work. */
  private readonly work = new Map<string, Promise<void>>();
  private readonly log: Logger;
  private closed = false;

  private readonly opts: CloudOptions;

  constructor(options: CloudOptions) {
    // Absolute: Ignition and the machines' processes run with other working directories.
    this.opts = { ...options, dataDir: resolve(options.dataDir) };
    const opts = this.opts;
    this.store = new CloudStore(join(opts.dataDir, 'cloud', 'state.db'));
    this.firmware = new Firmware({ ignition: opts.ignition ?? 'auto', ignitionBinary: opts.ignitionBinary });
    this.runtime = opts.runtime ?? NO_RUNTIME;
    this.log = opts.log ?? logger('cloud');
  }

  /** Brings the machines back to their recorded states (after a restart or a crash). */
  recover(): void {
    this.log.info({ ignition: this.firmware.describe() }, 'local cloud starting');
    const machines = join(this.opts.dataDir, 'machines');
    mkdirSync(machines, { recursive: true, mode: 0o755 });
    const problem = this.firmware.problemWith(machines);
    // Info, not a warning: a private (0700) data directory is bosun's default, and only machines
    // given users' ssh keys need more.
    if (problem) this.log.info(problem);
    // Machine directories of no live instance: left by a crash mid-create or mid-terminate.
    for (const id of readdirSync(machines)) {
      const instance = this.store.instances.get(id);
      if (!instance || instance.state === 'terminated') {
        rmSync(join(machines, id), { recursive: true, force: true });
        this.log.info({ instance: id }, 'removed an orphaned machine directory');
      }
    }
    for (const instance of this.store.instances.list()) {
      if (instance.state === 'pending' || instance.state === 'running') {
        this.update(instance.id, { state: 'pending', machine: { ...instance.machine, phase: 'Booting', message: 'booting after a restart of the cloud' } });
        this.enqueue(instance.id, () => this.bootMachine(instance.id, 0));
      } else if (instance.state === 'stopping') {
        this.update(instance.id, { state: 'stopped', machine: { ...instance.machine, phase: 'Down', message: undefined } });
      }
    }
  }

  createInstance(body: unknown): Instance {
    const request = parseCreateInstance(body);
    const created = this.store.transaction(() => {
      const live = this.store.instances.list().filter((i) => i.state !== 'terminated');
      const same = live.find((i) => i.name === request.name);
      if (same) throw conflict('InstanceNameInUse', `an instance named "${request.name}" already exists (${same.id}, ${same.state})`);
      let id = newInstanceId();
      while (this.store.instances.get(id)) id = newInstanceId();
      const now = new Date().toISOString();
      const instance: Instance = {
        id, name: request.name, type: request.type, zone: request.zone ?? leastUsedZone(live), region: REGION,
        privateIp: allocateAddress(INSTANCE_ADDRESS_PREFIX, live.map((i) => i.privateIp), 'instances', this.opts.firstInstanceHost),
        ...(request.userData ? { userData: request.userData } : {}),
        state: 'pending', launchTime: now, createdAt: now, machine: { phase: 'Booting', bootCount: 0 },
      };
      this.store.instances.put(id, instance);
      // The disk is made inside the transaction: if it cannot be, no record is left either.
      const m = machineDir(this.opts.dataDir, id);
      try { createMachineDisk(m, request.userData); } catch (e) {
        rmSync(m.dir, { recursive: true, force: true });
        throw e;
      }
      return instance;
    });
    this.log.info({ instance: created.id, name: created.name, type: created.type, zone: created.zone, ip: created.privateIp }, 'instance created');
    this.enqueue(created.id, () => this.bootMachine(created.id, 0));
    return created;
  }

  describeInstances(filter: InstanceFilter = {}): Instance[] {
    for (const s of filter.states ?? []) {
      if (!INSTANCE_STATES.includes(s)) throw invalid('InvalidParameterValue', `state "${s}" is not an instance state (${INSTANCE_STATES.join(', ')})`);
    }
    this.pruneTerminated();
    return this.store.instances.list().filter((i) =>
      (!filter.states?.length || filter.states.includes(i.state)) &&
      (!filter.names?.length || filter.names.includes(i.name)) &&
      (!filter.ids?.length || filter.ids.includes(i.id)));
  }

  getInstance(id: string): Instance {
    const instance = this.store.instances.get(id);
    if (!instance) throw notFound('InvalidInstanceID.NotFound', `instance ${id} does not exist`);
    return instance;
  }

  /** Applies an operation; answers with the instance as recorded (terminate: once it is done). */
  async operate(op: Operation, id: string): Promise<Instance> {
    const next = this.store.transaction(() => transition(op, id, this.getInstance(id).state));
    if (next === undefined) return this.getInstance(id);
    switch (op) {
      case 'start':
        this.update(id, { state: 'pending', launchTime: new Date().toISOString(), machine: { ...this.getInstance(id).machine, phase: 'Booting', message: undefined } });
        this.enqueue(id, () => this.bootMachine(id, 0));
        break;
      case 'stop':
        this.update(id, { state: 'stopping' });
        this.machine(id).abortBoot();
        this.enqueue(id, async () => {
          await this.shutdownMachine(id);
          this.update(id, { state: 'stopped' });
        });
        break;
      case 'reboot':
        this.enqueue(id, async () => {
          await this.shutdownMachine(id);
          if (this.getInstance(id).state === 'running') await this.bootMachine(id, this.opts.bootDelayMs ?? DEFAULT_BOOT_DELAY_MS);
        });
        break;
      case 'terminate':
        this.machine(id).abortBoot();
        await this.enqueue(id, async () => {
          await this.shutdownMachine(id);
          // Recorded first: a crash before the directory goes leaves an orphan that recover() sweeps.
          this.update(id, { state: 'terminated', terminatedAt: new Date().toISOString() });
          rmSync(machineDir(this.opts.dataDir, id).dir, { recursive: true, force: true });
          this.machines.delete(id);
          this.log.info({ instance: id }, 'instance terminated');
        });
        break;
    }
    return this.getInstance(id);
  }

  /** Powers every machine off (their recorded states stay, so a restart brings them back). */
  async powerOff(): Promise<void> {
    this.closed = true;
    for (const w of this.powerRequests.values()) w.stop();
    for (const m of this.machines.values()) m.abortBoot();
    await Promise.all([...this.work.values()]);
    await Promise.all([...this.machines.values()].map((m) => m.shutdown()));
  }

  /** Powers every machine off and closes the store. */
  async close(): Promise<void> {
    await this.powerOff();
    this.store.close();
  }

  private machine(id: string): Machine {
    let m = this.machines.get(id);
    if (!m) {
      m = new Machine(machineDir(this.opts.dataDir, id), this.firmware, this.runtime, this.log.child({ instance: id }));
      this.machines.set(id, m);
    }
    return m;
  }

  private update(id: string, patch: Partial<Instance>): Instance {
    return this.store.transaction(() => {
      const next = { ...this.getInstance(id), ...patch };
      for (const k of Object.keys(next) as (keyof Instance)[]) if (next[k] === undefined) delete next[k];
      this.store.instances.put(id, next);
      return next;
    });
  }

  private setMachine(id: string, phase: Instance['machine']['phase'], message?: string, bootCount?: number): void {
    const current = this.getInstance(id).machine;
    this.update(id, { machine: { phase, ...(message ? { message } : {}), bootCount: bootCount ?? current.bootCount } });
  }

  /** Queues machine work for an instance behind what is already queued for it. */
  private enqueue(id: string, fn: () => Promise<void>): Promise<void> {
    const run = (this.work.get(id) ?? Promise.resolve()).then(async () => {
      if (this.closed) return;
      try { await fn(); } catch (e) { this.log.error({ instance: id, err: (e as Error).message }, 'machine work failed'); }
    });
    this.work.set(id, run);
    void run.then(() => { if (this.work.get(id) === run) this.work.delete(id); });
    return run;
  }

  private async bootMachine(id: string, delayMs: number): Promise<void> {
    // A stop or terminate accepted after this boot was queued wins, and so does close().
    if (this.closed || !['pending', 'running'].includes(this.getInstance(id).state)) return;
    if (!existsSync(machineDir(this.opts.dataDir, id).root)) {
      this.setMachine(id, 'Failed', `the machine's root ${machineDir(this.opts.dataDir, id).root} is missing`);
      return;
    }
    this.setMachine(id, delayMs > 0 ? 'Down' : 'Booting');
    const outcome = await this.machine(id).boot(delayMs, () => this.getInstance(id), (message) => this.setMachine(id, 'Booting', message));
    if (!outcome.ok && outcome.aborted) return;
    const instance = this.getInstance(id);
    if (instance.state !== 'pending' && instance.state !== 'running') return;
    if (outcome.ok) {
      this.update(id, { state: 'running', bootId: outcome.bootId, machine: { phase: 'Up', bootCount: instance.machine.bootCount + 1 } });
      this.powerRequests.get(id)?.stop();
      this.powerRequests.set(id, new PowerRequestWatcher(machineDir(this.opts.dataDir, id).root, (request) => {
        this.log.info({ instance: id, request }, 'power request from inside the machine');
        this.operate(request, id).catch((e) => this.log.warn({ instance: id, err: (e as Error).message }, 'power request from inside the machine refused'));
      }));
    }
    else this.update(id, { state: 'running', machine: { phase: 'Failed', message: outcome.message, bootCount: instance.machine.bootCount + 1 } });
  }

  private async shutdownMachine(id: string): Promise<void> {
    this.powerRequests.get(id)?.stop();
    this.powerRequests.delete(id);
    await this.machine(id).shutdown();
    if (this.store.instances.get(id)) this.setMachine(id, 'Down');
  }

  private pruneTerminated(): void {
    const keepMs = this.opts.terminatedRetentionMs ?? 60 * 60 * 1000;
    const cutoff = Date.now() - keepMs;
    this.store.transaction(() => {
      for (const i of this.store.instances.list()) {
        if (i.state === 'terminated' && i.terminatedAt && Date.parse(i.terminatedAt) < cutoff) this.store.instances.delete(i.id);
      }
    });
  }
}

/** The zone with the fewest live instances (first in order on a tie), to spread by default. */
function leastUsedZone(live: Instance[]): string {
  const count = (z: string) => live.filter((i) => i.zone === z).length;
  return [...ZONES].sort((a, b) => count(a) - count(b))[0];
}
