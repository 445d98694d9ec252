/**
 * The local installer runner with real processes: output to the log and the caller line by
 * line, exit statuses, a timeout that ends a whole process tree, and the PID file a restarted
 * bpa uses to find an installer still at work.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  findRunningInstaller,
  runLocalInstaller,
  type RunOptions,
} from '../../../src/apply/installer/local.js';
import { killProcessGroup, waitForExit } from '../../../src/util/proc.js';
import { BpaError } from '../../../src/util/errors.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Read straight from /proc, independently of the module under test. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function liveGroupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[2] === String(pgid) && fields[0] !== 'Z') pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('runLocalInstaller', function () {
  this.timeout(30_000);
  let dir = '';
  let clusterDir = '';
  /** PIDs started by a test, killed in afterEach if anything failed before they ended. */
  let started: number[] = [];

  before(function () {
    if (process.platform !== 'linux') {
      console.log('the local installer runner needs Linux /proc; skipping');
      this.skip();
    }
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-installer-'));
    clusterDir = join(dir, 'clusters', 'edge-1');
    await mkdir(clusterDir, { recursive: true });
    started = [];
  });

  afterEach(async () => {
    for (const pid of started) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Ended already, as it should have.
      }
    }
    await rm(dir, { recursive: true, force: true });
  });

  async function script(name: string, body: string): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return path;
  }

  const options = (extra: Partial<RunOptions> = {}): RunOptions => ({
    cwd: clusterDir,
    logDir: join(clusterDir, 'logs'),
    logName: 'provision-cluster-20240101T000000Z.log',
    timeoutMs: 20_000,
    ...extra,
  });

  it('passes every line on, logs it, keeps the tail and redacts secrets', async () => {
    const path = await script(
      'chatty.sh',
      [
        'pwd',
        'i=1; while [ $i -le 30 ]; do echo "out-$i"; echo "err-$i" >&2; i=$((i+1)); done',
        'echo "fetching https://bpa:s3cret-token@git.example.test/site.git"',
        'echo "password is hunter22 here"',
        'printf "no newline at the end"',
      ].join('\n'),
    );
    const lines: string[] = [];
    const result = await runLocalInstaller([path, 'cluster'], {
      ...options({ secrets: ['hunter22'] }),
      onLine: (l) => lines.push(l),
    });

    assert.equal(result.exitCode, 0);
    assert.equal(result.signal, null);
    assert.equal(result.timedOut, false);
    // stdout and stderr are separate pipes: their lines keep their order within each stream.
    const stdout = lines.filter((l) => !l.startsWith('err-'));
    assert.equal(stdout[0], clusterDir, 'runs in the cluster directory');
    assert.equal(lines.length, 1 + 60 + 3);
    for (let i = 1; i <= 30; i++) {
      assert.ok(lines.includes(`out-${i}`) && lines.includes(`err-${i}`), `line ${i}`);
    }
    assert.ok(lines.includes('fetching https://***@git.example.test/site.git'));
    assert.ok(lines.includes('password is *** here'));
    assert.equal(stdout.at(-1), 'no newline at the end');

    assert.equal(result.tail, lines.slice(-20).join('\n'));
    assert.equal(
      result.logFile,
      join(clusterDir, 'logs', 'provision-cluster-20240101T000000Z.log'),
    );
    const log = await readFile(result.logFile, 'utf8');
    const logLines = log.trimEnd().split('\n');
    assert.match(logLines[0] ?? '', /^# bpa: \S+ start: .*chatty\.sh cluster \(in /);
    assert.match(logLines.at(-1) ?? '', /^# bpa: \S+ end: exit 0 after \d+\.\d s$/);
    assert.deepEqual(logLines.slice(1, -1), lines);
    assert.doesNotMatch(log, /s3cret|hunter22/);
    assert.ok(result.durationMs >= 0 && result.durationMs < 20_000);
  });

  it('appends to an existing log', async () => {
    const path = await script('twice.sh', 'echo "run $1"');
    await runLocalInstaller([path, 'one'], options());
    const result = await runLocalInstaller([path, 'two'], options());
    const log = await readFile(result.logFile, 'utf8');
    assert.match(log, /run one[\s\S]*run two/);
    assert.equal(log.match(/# bpa: \S+ start:/g)?.length, 2);
  });

  it('returns a non-zero exit without throwing', async () => {
    const path = await script('fail.sh', 'echo "TASK [x] failed" >&2\nexit 3');
    const result = await runLocalInstaller([path], options());
    assert.equal(result.exitCode, 3);
    assert.equal(result.timedOut, false);
    assert.equal(result.tail, 'TASK [x] failed');
    assert.match(await readFile(result.logFile, 'utf8'), /end: exit 3 after/);
  });

  it('reports a missing program as INSTALLER_NOT_FOUND, and logs it', async () => {
    await assert.rejects(
      runLocalInstaller([join(dir, 'no-such-installer'), 'cluster'], options()),
      (err: unknown) => {
        assert.ok(err instanceof BpaError);
        assert.equal(err.code, 'INSTALLER_NOT_FOUND');
        assert.equal(err.retry, 'stalled');
        assert.match(err.message, /no-such-installer/);
        return true;
      },
    );
    await assert.rejects(runLocalInstaller(['bpa-no-such-program-on-path'], options()), {
      code: 'INSTALLER_NOT_FOUND',
    });
    const log = await readFile(join(clusterDir, 'logs', options().logName), 'utf8');
    assert.match(log, /could not start: installer program .*no-such-installer.* not found/);
  });

  it('reports a program that is not executable', async () => {
    const path = join(dir, 'not-executable.sh');
    await writeFile(path, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    await assert.rejects(runLocalInstaller([path], options()), {
      code: 'INSTALLER_NOT_EXECUTABLE',
    });
  });

  it('rejects a missing cluster directory and a log name that is a path', async () => {
    const path = await script('ok.sh', 'true');
    await assert.rejects(runLocalInstaller([path], options({ cwd: join(dir, 'gone') })), {
      code: 'INSTALLER_CWD_MISSING',
    });
    await assert.rejects(runLocalInstaller([path], options({ logName: '../escape.log' })), {
      code: 'INSTALLER_COMMAND_INVALID',
    });
  });

  it('on timeout ends the whole process tree, even children that ignore SIGTERM', async () => {
    const path = await script(
      'hang.sh',
      [
        'sleep 100 & echo "child $!"',
        'sleep 100 & echo "child $!"',
        // A grandchild behind a subshell, and one that ignores SIGTERM.
        '( sleep 100 & echo "child $!"; wait ) &',
        '( trap "" TERM; sleep 100 & echo "child $!"; wait ) &',
        'echo "leader $$"',
        'wait',
      ].join('\n'),
    );
    const pids: number[] = [];
    let leader = 0;
    const t0 = Date.now();
    const result = await runLocalInstaller([path], {
      ...options({ timeoutMs: 1_000, killGraceMs: 500 }),
      onLine: (l) => {
        const m = /^(child|leader) (\d+)$/.exec(l);
        if (m?.[1] === 'child') pids.push(Number(m[2]));
        if (m?.[1] === 'leader') {
          leader = Number(m[2]);
          started.push(leader);
        }
      },
    });
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
    assert.equal(pids.length, 4);
    assert.ok(leader > 0);
    for (const pid of pids) assert.ok(!alive(pid), `child ${pid} survived the timeout`);
    assert.deepEqual(liveGroupMembers(leader), [], 'the process group is empty');
    assert.ok(Date.now() - t0 < 5_000, 'returned soon after the timeout and grace period');
    assert.match(
      await readFile(result.logFile, 'utf8'),
      /end: signal SIGTERM \(timed out, process group killed\)/,
    );
  });

  it('ends the process tree when the caller aborts', async () => {
    const path = await script('long.sh', 'sleep 100 & echo "child $!"\nwait');
    const controller = new AbortController();
    let child = 0;
    const result = await runLocalInstaller([path], {
      ...options({ signal: controller.signal }),
      onLine: (l) => {
        child = Number(/^child (\d+)$/.exec(l)?.[1] ?? 0);
        controller.abort();
      },
    });
    assert.equal(result.aborted, true);
    assert.equal(result.timedOut, false);
    assert.ok(child > 0 && !alive(child));
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(runLocalInstaller([path], options({ signal: aborted.signal })));
  });

  it('records its PID for a restarted bpa, and removes it when done', async () => {
    const path = await script(
      'pid.sh',
      `echo "leader $$"\nwhile [ ! -e '${join(dir, 'go')}' ]; do sleep 0.05; done`,
    );
    const pidFile = join(clusterDir, 'installer.pid');
    let leader = 0;
    const run = runLocalInstaller([path], {
      ...options({ pidFile }),
      onLine: (l) => {
        leader = Number(/^leader (\d+)$/.exec(l)?.[1] ?? 0);
        started.push(leader);
      },
    });
    await until('the installer to start', 5_000, () => leader > 0 && existsSync(pidFile));
    assert.equal(await findRunningInstaller(pidFile), leader);
    assert.equal(await waitForExit(leader, 100), false, 'still running');
    await writeFile(join(dir, 'go'), '');
    const result = await run;
    assert.equal(result.exitCode, 0);
    assert.ok(!existsSync(pidFile), 'the PID file is removed once the installer ended');
    assert.equal(await findRunningInstaller(pidFile), undefined);
    assert.equal(await waitForExit(leader, 100), true);
  });

  it('records nothing for an installer that ended at once, and that is no error', async () => {
    const pidFile = join(clusterDir, 'installer.pid');
    for (let i = 0; i < 5; i++) {
      const result = await runLocalInstaller(['true'], options({ pidFile }));
      assert.equal(result.exitCode, 0);
      assert.ok(!existsSync(pidFile));
    }
  });

  it('ends an installer whose PID cannot be recorded, and says why', async () => {
    // It may be ended before it prints anything: it is found by its command line instead.
    const path = await script('unrecorded.sh', 'while :; do sleep 0.05; done');
    await assert.rejects(
      runLocalInstaller([path], {
        ...options({ pidFile: join(dir, 'no-such-dir', 'installer.pid'), killGraceMs: 500 }),
      }),
      (err: unknown) => {
        assert.ok(err instanceof BpaError);
        assert.equal(err.code, 'INSTALLER_START_FAILED');
        assert.match(err.message, /could not record the installer's PID/);
        return true;
      },
    );
    const left = readdirSync('/proc').filter((entry) => {
      try {
        return /^\d+$/.test(entry) && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path);
      } catch {
        return false;
      }
    });
    assert.deepEqual(
      left.filter((pid) => alive(Number(pid))),
      [],
      'the unrecorded installer was ended',
    );
  });

  it('does not start an installer whose log cannot be written', async () => {
    const marker = join(dir, 'ran');
    const path = await script('never.sh', `touch '${marker}'`);
    await writeFile(join(dir, 'file'), '');
    await assert.rejects(runLocalInstaller([path], options({ logDir: join(dir, 'file') })));
    await mkdir(join(clusterDir, 'logs', options().logName), { recursive: true });
    await assert.rejects(runLocalInstaller([path], options()), { code: 'INSTALLER_LOG_FAILED' });
    assert.ok(!existsSync(marker));
  });

  it('does not take a reused PID or a damaged PID file for the installer', async () => {
    const pidFile = join(dir, 'installer.pid');
    assert.equal(await findRunningInstaller(pidFile), undefined, 'no file');
    await writeFile(pidFile, 'not json');
    assert.equal(await findRunningInstaller(pidFile), undefined, 'garbage');
    await writeFile(pidFile, JSON.stringify({ pid: 1 }));
    assert.equal(await findRunningInstaller(pidFile), undefined, 'incomplete');

    // A record of an installer started under this PID earlier: this process is alive with the
    // same PID, but it started at another time, or with another command line.
    const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const cmdline = readFileSync(`/proc/${process.pid}/cmdline`, 'utf8')
      .replace(/\0$/, '')
      .split('\0');
    const record = {
      pid: process.pid,
      bootId,
      startTime,
      cmdline,
      startedAt: new Date().toISOString(),
    };
    await writeFile(pidFile, JSON.stringify(record));
    assert.equal(await findRunningInstaller(pidFile), process.pid, 'the genuine record matches');
    await writeFile(
      pidFile,
      JSON.stringify({ ...record, startTime: String(Number(startTime) - 1) }),
    );
    assert.equal(await findRunningInstaller(pidFile), undefined, 'another start time');
    await writeFile(pidFile, JSON.stringify({ ...record, cmdline: ['/bin/sh', 'installer.sh'] }));
    assert.equal(await findRunningInstaller(pidFile), undefined, 'another command line');
    await writeFile(pidFile, JSON.stringify({ ...record, bootId: 'another-boot' }));
    assert.equal(await findRunningInstaller(pidFile), undefined, 'another boot');
  });

  it('lets a restarted bpa find and wait for an installer whose bpa was SIGKILLed', async () => {
    const path = await script('survivor.sh', 'sleep 100 & echo "child $!"\nwait');
    const pidFile = join(clusterDir, 'installer.pid');
    const job = {
      argv: [path],
      cwd: clusterDir,
      logDir: join(clusterDir, 'logs'),
      logName: 'provision-cluster.log',
      pidFile,
      timeoutMs: 60_000,
    };
    const fixture = fileURLToPath(new URL('./fixtures/run-installer.ts', import.meta.url));
    const bpa = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify(job)], {
      stdio: 'ignore',
    });
    const bpaPid = bpa.pid ?? 0;
    const bpaExited = new Promise((r) => bpa.once('exit', r));
    try {
      await until('the installer to be recorded', 15_000, () => existsSync(pidFile));
      const record = JSON.parse(await readFile(pidFile, 'utf8')) as { pid: number };
      started.push(record.pid);
      assert.equal(await findRunningInstaller(pidFile), record.pid);
      process.kill(bpaPid, 'SIGKILL');
      await bpaExited;
      // What a restarted bpa sees: the installer, in its own process group, outlived bpa.
      assert.equal(await findRunningInstaller(pidFile), record.pid);
      assert.equal(await waitForExit(record.pid, 200), false);
      const members = liveGroupMembers(record.pid);
      assert.equal(members.length, 2, 'the installer and its sleep');
      assert.equal(await killProcessGroup(record.pid, 1_000), true);
      assert.equal(await waitForExit(record.pid, 2_000), true);
      for (const pid of members) assert.ok(!alive(pid), `${pid} survived`);
      assert.equal(await findRunningInstaller(pidFile), undefined);
    } finally {
      if (alive(bpaPid)) process.kill(bpaPid, 'SIGKILL');
    }
  });
});
