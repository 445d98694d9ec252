import assert from 'node:assert/strict';
import { SpawnError, runProcess, startProcess } from '../../../src/util/run-process.js';

describe('runProcess', () => {
  it('captures output and the exit status, and judges nothing', async () => {
    const r = await runProcess(['sh', '-c', 'echo out; echo err >&2; exit 3'], {
      timeoutMs: 10_000,
    });
    assert.equal(r.exitCode, 3);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.timedOut, false);
  });

  it('feeds stdin and passes each line on as it comes', async () => {
    const lines: string[] = [];
    const r = await runProcess(['cat'], {
      timeoutMs: 10_000,
      input: 'one\ntwo\n',
      onLine: (line) => lines.push(line),
    });
    assert.equal(r.exitCode, 0);
    assert.deepEqual(lines, ['one', 'two']);
  });

  it('ends a program that runs too long, and says so', async () => {
    const r = await runProcess(['sleep', '30'], { timeoutMs: 100, killGraceMs: 0 });
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, null);
    assert.equal(r.signal, 'SIGKILL');
  });

  it('ends a program when the signal fires', async () => {
    const stop = new AbortController();
    const running = await startProcess(['sleep', '30'], {
      timeoutMs: 30_000,
      signal: stop.signal,
    });
    stop.abort();
    const r = await running.ended;
    assert.equal(r.aborted, true);
    assert.equal(r.signal, 'SIGTERM');
  });

  it('throws SpawnError, with the reason, for a program that cannot start', async () => {
    const err = await runProcess(['/nonexistent/bpa-tool'], { timeoutMs: 1000 }).catch(
      (e: unknown) => e,
    );
    assert.ok(err instanceof SpawnError);
    assert.equal(err.code, 'ENOENT');
  });
});
