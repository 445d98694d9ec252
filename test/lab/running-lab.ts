import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { leaseFile } from './dhcp.js';
import { run, type RunResult } from './exec.js';
import {
  createHost,
  execInHost,
  generateHostKey,
  holderScriptPath,
  startSshd,
  stopSshd,
  type HostContext,
} from './host.js';
import type { Lab, LabHost } from './lab.js';
import { MAX_HOSTS } from './names.js';
import { saveState, type LabState } from './state.js';
import { teardownLab } from './teardown.js';

function passwdIds(user: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  const fields = line?.split(':') ?? [];
  if (fields.length < 4) throw new Error(`user ${user} not found in /etc/passwd`);
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/** What hosts of `state` need that the state file does not hold. */
export async function contextOf(state: LabState): Promise<HostContext> {
  return {
    ...passwdIds(state.user),
    publicKey: (await readFile(`${state.keyPath}.pub`, 'utf8')).trim(),
    holderScript: holderScriptPath(state),
    warn: () => undefined,
  };
}

/** The Lab handle: every change to a host is written back to the state file at once. */
export class RunningLab implements Lab {
  private stopped = false;

  constructor(
    private readonly state: LabState,
    private readonly ctx: HostContext,
    readonly warnings: string[],
  ) {
    ctx.warn = (message) => warnings.push(message);
  }

  get id(): string {
    return this.state.id;
  }
  get dir(): string {
    return this.state.dir;
  }
  get bridge(): string {
    return this.state.bridge;
  }
  get gatewayIp(): string {
    return this.state.gatewayIp;
  }
  get hosts(): LabHost[] {
    return this.state.hosts;
  }
  get leaseFile(): string {
    return leaseFile(this.state);
  }
  get keyPath(): string {
    return this.state.keyPath;
  }
  get publicKey(): string {
    return this.ctx.publicKey;
  }
  get user(): string {
    return this.state.user;
  }
  get password(): string {
    return this.state.password;
  }
  get knownHostsPath(): string {
    return join(this.state.dir, 'known_hosts');
  }
  get isolatedPackages(): boolean {
    return this.state.isolatedPackages ?? false;
  }
  get knownHostKeys(): Record<string, string> {
    return Object.fromEntries(this.state.hosts.map((h) => [h.name, h.hostKey]));
  }

  /** Writes the state file and the known_hosts file. */
  async persist(): Promise<void> {
    this.state.hosts.sort((a, b) => a.index - b.index);
    await saveState(this.state);
    // OpenSSH's known_hosts names a host on another port than 22 as [address]:port.
    const lines = this.state.hosts
      .map((h) => `${h.port === 22 ? h.ip : `[${h.ip}]:${h.port}`} ${h.hostKey}\n`)
      .join('');
    await writeFile(this.knownHostsPath, lines);
  }

  async createHostAt(index: number): Promise<LabHost> {
    const host = await createHost(this.state, index, this.ctx);
    this.state.hosts.push(host);
    return host;
  }

  private host(name: string): LabHost {
    this.assertRunning();
    const host = this.state.hosts.find((h) => h.name === name);
    if (!host) throw new Error(`lab ${this.id} has no host ${name}`);
    return host;
  }

  private assertRunning(): void {
    if (this.stopped) throw new Error(`lab ${this.id} is stopped`);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    // Marked only after success, so a failed teardown can be retried with another stop().
    await teardownLab(this.state);
    this.stopped = true;
  }

  async stopSshd(name: string, opts: { killSessions?: boolean } = {}): Promise<void> {
    await stopSshd(this.host(name), opts.killSessions ?? false);
    await this.persist();
  }

  async startSshd(name: string): Promise<void> {
    const host = this.host(name);
    host.sshdPid = await startSshd(host);
    await this.persist();
  }

  async rotateHostKey(name: string): Promise<void> {
    const host = this.host(name);
    const wasRunning = host.sshdPid !== 0;
    host.hostKey = await generateHostKey(host);
    if (wasRunning) {
      await stopSshd(host, false);
      host.sshdPid = await startSshd(host);
    }
    await this.persist();
  }

  async addHost(): Promise<LabHost> {
    this.assertRunning();
    const used = this.state.hosts.map((h) => h.index);
    const index = Math.max(0, ...used) + 1;
    if (index > MAX_HOSTS) throw new Error(`a lab holds at most ${MAX_HOSTS} hosts`);
    const host = await this.createHostAt(index);
    await this.persist();
    return host;
  }

  async setLink(name: string, up: boolean): Promise<void> {
    await run('ip', ['link', 'set', 'dev', this.host(name).veth, up ? 'up' : 'down']);
  }

  exec(name: string, argv: string[]): Promise<RunResult> {
    return execInHost(this.host(name), argv);
  }
}
