// The node agent as the local cloud's MachineRuntime: a booted machine gets a NodeAgent started
// from its root, a machine going down has its agent stopped (heartbeat, pods, servers) before the
// cloud reports it down. One runtime serves every machine of a cloud. Beside the agent, the boot
// runs the bootstrap data's kubeadm.service (boot-units.ts), as systemd starts it beside the kubelet.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logger } from '../../common/log.js';
import type { BootedMachine, MachineRuntime } from '../../cloud/machine-runtime.js';
import { NodeAgent, type NodeAgentOptions } from './agent.js';
import { runKubeadmUnit } from './boot-units.js';
import { KUBELET_UNIT } from './kubelet-files.js';
import { scriptCommand } from './pod-spec.js';

/**
 * The node flags of a component's process, V8 tuned for a small, long-lived and mostly idle process
 * (a machine runs a dozen of them): `--optimize-for-size` (smaller heap growth, code flushed sooner:
 * the CVO and Cluster API's controllers 15-20 MiB less) and `--no-opt` (no TurboFan: its compiler's
 * code and zones stay untouched, some 4 MiB less in every process, for about a fifth more CPU in
 * hot code — measured with bench:cvo; components mostly wait on the API server).
 * `BOSUN_COMPONENT_NODE_OPTIONS` in the agent's environment replaces them (empty: node's defaults).
 */
export function componentNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.BOSUN_COMPONENT_NODE_OPTIONS ?? DEFAULT_COMPONENT_NODE_FLAGS).split(/\s+/).filter(Boolean);
}
const DEFAULT_COMPONENT_NODE_FLAGS = '--optimize-for-size --no-opt';

/**
 * The components whose containers run as threads of the agent's process rather than processes
 * (container-thread.ts): those a machine runs one of on every node, as DaemonSets — the
 * machine-config daemon (every machine) and server (every master). Each is some 40 MiB less RSS
 * than a process of its own (node's own pages, mapped again by every process); the operators and
 * every other component stay processes. `BOSUN_COMPONENT_THREADS` in the agent's environment
 * replaces the list (empty: every component a process).
 */
export function componentThreads(env: NodeJS.ProcessEnv = process.env): Set<string> {
  return new Set((env.BOSUN_COMPONENT_THREADS ?? DEFAULT_COMPONENT_THREADS).split(/[\s,]+/).filter(Boolean));
}
const DEFAULT_COMPONENT_THREADS = 'machine-config-daemon machine-config-server';

/**
 * bosun's command as a component's process runs it. When this agent runs compiled code, the same
 * build's entry point (dist/cli/main.js) directly: no check of the sources' age at every start, and
 * a pod runs the code of the agent that started it even when the sources changed since. From
 * source (tests), bin/bosun.js, which runs dist/ when it is fresh and the sources through tsx if not.
 */
export function bosunCommand(argv: string[]): string[] {
  if (import.meta.url.endsWith('.js')) return [process.execPath, ...componentNodeFlags(), fileURLToPath(new URL('../../cli/main.js', import.meta.url)), ...argv];
  return [process.execPath, ...componentNodeFlags(), fileURLToPath(new URL('../../../bin/bosun.js', import.meta.url)), ...argv];
}

export class NodeAgentRuntime implements MachineRuntime {
  private readonly agents = new Map<string, NodeAgent>();
  private readonly units = new Map<string, { stop: AbortController; done: Promise<unknown> }>();
  private readonly options: NodeAgentOptions;

  constructor(options: Partial<NodeAgentOptions> = {}) {
    this.options = { componentCommand: bosunCommand, threadComponents: componentThreads(), echoCommand: scriptCommand('echo'), log: logger('node-agent'), ...options };
  }

  async onBoot(machine: BootedMachine): Promise<void> {
    // A machine whose Ignition config installed no kubelet boots and runs nothing, as systemd
    // would start no kubelet; kubelet files that are there but broken fail the boot, saying why.
    if (!existsSync(join(machine.root, KUBELET_UNIT))) {
      this.options.log.info({ instance: machine.instance.id, name: machine.instance.name }, `no ${KUBELET_UNIT} in the machine root: no node agent runs`);
      return;
    }
    const agent = new NodeAgent(machine, this.options);
    this.agents.set(machine.instance.id, agent);
    agent.start();
    const stop = new AbortController();
    const done = runKubeadmUnit({ root: machine.root, nodeIP: machine.instance.privateIp, bosunCommand: this.options.componentCommand, log: agent.log, signal: stop.signal })
      // What it wrote (static pod manifests above all) is read at once, not at the next check.
      .finally(() => agent.resyncStaticPods());
    this.units.set(machine.instance.id, { stop, done });
  }

  async onShutdown(machine: BootedMachine): Promise<void> {
    const agent = this.agents.get(machine.instance.id);
    this.agents.delete(machine.instance.id);
    const unit = this.units.get(machine.instance.id);
    this.units.delete(machine.instance.id);
    unit?.stop.abort();
    await unit?.done;
    await agent?.stop();
  }

  /** The agent running on an instance, if it is up. */
  agent(instanceId: string): NodeAgent | undefined {
    return this.agents.get(instanceId);
  }
}
