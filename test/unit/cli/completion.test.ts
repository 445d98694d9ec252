import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../validate/run-cli.js';

/** Runs `script` in `shell` (from `cwd`); undefined when the shell is not installed. */
function shell(
  name: string,
  script: string,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string } | undefined> {
  return new Promise((resolve) => {
    execFile(name, ['-c', script], { cwd, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return resolve(undefined);
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('bpa completion', function () {
  this.timeout(30_000);
  let dir: string;
  const scripts: Record<string, string> = {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-completion-'));
    await writeFile(join(dir, 'site.yaml'), '');
    for (const sh of ['bash', 'zsh', 'fish']) {
      const r = await runCli(['completion', sh]);
      assert.equal(r.code, 0, r.stderr);
      scripts[sh] = join(dir, `bpa.${sh}`);
      await writeFile(scripts[sh] as string, r.stdout);
    }
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The words bash completes for the command line `words` (the last one being typed). */
  async function bashComplete(...words: string[]): Promise<string[]> {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const r = await shell(
      'bash',
      `source ${scripts['bash']}; COMP_WORDS=(bpa ${quoted}); COMP_CWORD=${words.length}; _bpa_completion; printf '%s\\n' "\${COMPREPLY[@]}"`,
      dir,
    );
    assert.ok(r, 'bash is installed');
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n').filter(Boolean);
  }

  it('bash: commands, flags, flag values, file arguments', async () => {
    assert.deepEqual(await bashComplete('pl'), ['plan']);
    assert.deepEqual(await bashComplete('re'), ['reconcile']);
    assert.deepEqual(await bashComplete('validate', '--o'), ['--output']);
    assert.deepEqual(await bashComplete('validate', '-o', ''), ['text', 'json', 'github']);
    assert.deepEqual(await bashComplete('plan', '--flavour', 'k'), ['kud', 'kubespray']);
    assert.deepEqual(await bashComplete('apply', '--inventory'), [
      '--inventory',
      '--inventory-namespace',
    ]);
    // The deprecated spelling is not offered.
    assert.deepEqual(await bashComplete('apply', '--namespace'), []);
    assert.deepEqual(await bashComplete('completion', ''), ['bash', 'zsh', 'fish']);
    assert.deepEqual(await bashComplete('validate', 'si'), ['site.yaml']);
  });

  it('zsh: the script loads and registers _bpa for bpa', async function () {
    const r = await shell(
      'zsh',
      `autoload -U compinit && compinit -u -D && source ${scripts['zsh']} && print -r -- $_comps[bpa]`,
      dir,
    );
    if (!r) {
      console.log(
        '      skipped: zsh is not installed (scripts/install-system-deps.sh installs it)',
      );
      return this.skip();
    }
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '_bpa');
  });

  it('fish: commands and flag values complete', async function () {
    const complete = async (line: string): Promise<string[]> => {
      const r = await shell('fish', `source ${scripts['fish']}; complete -C '${line}'`, dir);
      if (!r) return [];
      assert.equal(r.code, 0, r.stderr);
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0] as string);
    };
    if (!(await shell('fish', 'true', dir))) {
      console.log(
        '      skipped: fish is not installed (scripts/install-system-deps.sh installs it)',
      );
      return this.skip();
    }
    assert.deepEqual(await complete('bpa pl'), ['plan']);
    assert.deepEqual(await complete('bpa validate -o '), ['github', 'json', 'text']);
    assert.ok((await complete('bpa plan --inv')).includes('--inventory-namespace'));
  });

  it('an unknown shell is a usage error', async () => {
    const r = await runCli(['completion', 'tcsh']);
    assert.equal(r.code, 64);
    assert.match(r.stderr, /Allowed choices are bash, zsh, fish/);
  });
});
