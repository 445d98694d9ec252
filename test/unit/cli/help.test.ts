import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from '@commander-js/extra-typings';
import { EXAMPLES } from '../../../src/cli/examples.js';
import { outputOption } from '../../../src/cli/output-option.js';
import { runCli } from '../validate/run-cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A command's flags as its --help lists them: `-o`, `--output`, … */
async function flagsOf(command: string): Promise<Set<string>> {
  const help = await runCli([command, '--help']);
  return new Set(
    [...help.stdout.matchAll(/(?<=^|[\s,])(--?[a-z][-a-z]*)/gm)].map((m) => m[1] as string),
  );
}

describe('--help examples', function () {
  this.timeout(30_000);

  it('every command has examples at the end of its --help', async () => {
    const top = await runCli(['--help']);
    const commands = [...top.stdout.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1] as string);
    assert.deepEqual(commands.filter((c) => c !== 'help').sort(), Object.keys(EXAMPLES).sort());
    for (const command of commands.filter((c) => c !== 'help')) {
      const help = await runCli([command, '--help']);
      assert.match(help.stdout, /\nExamples:\n/, command);
      for (const [line, what] of EXAMPLES[command] ?? []) {
        assert.ok(help.stdout.includes(`  # ${what}\n  ${line}\n`), `${command}: ${line}`);
      }
    }
  });

  it('every flag in an example is one its command takes', async () => {
    for (const [command, examples] of Object.entries(EXAMPLES)) {
      const flags = await flagsOf(command);
      for (const [line] of examples) {
        const words = line.split(/\s+/);
        assert.ok(words.includes(command), `${line} runs bpa ${command}`);
        for (const w of words.filter((w) => w.startsWith('-'))) {
          assert.ok(
            flags.has(w.split('=')[0] as string),
            `${line}: ${w} is not a flag of bpa ${command}`,
          );
        }
      }
    }
  });

  it('the examples on sites/example run as shown', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'bpa-examples-'));
    const cwd = process.cwd();
    process.chdir(ROOT);
    try {
      const local = Object.values(EXAMPLES)
        .flat()
        .map(([line]) => line)
        .filter((line) => line.startsWith('bpa ') && line.includes(' sites/example'));
      assert.ok(local.length >= 4);
      for (const line of local) {
        const args = line
          .split(/\s+/)
          .slice(1)
          .map((w) => (w.startsWith('/tmp/') ? join(tmp, w.slice(5)) : w));
        const r = await runCli(args);
        // validate: 0 valid; plan: 2 changes (the example site is not applied).
        assert.equal(r.code, args[0] === 'plan' ? 2 : 0, `${line}\n${r.stdout}${r.stderr}`);
        if (args.includes('--out'))
          assert.match(
            await readFile(join(tmp, 'inventories', 'cluster-east', 'hosts.ini'), 'utf8'),
            /\[kube-master\]|\[kube_control_plane\]/,
          );
      }
    } finally {
      process.chdir(cwd);
      await rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('typed options', () => {
  it('an option declared with -o is typed as the union of its formats', () => {
    const cmd = new Command('x').exitOverride().addOption(outputOption(['text', 'json']));
    let seen: 'text' | 'json' | undefined;
    cmd.action((opts) => {
      seen = opts.output;
      // @ts-expect-error: not declared, so not in the options' type
      void opts.nothing;
    });
    cmd.parse(['-o', 'json'], { from: 'user' });
    assert.equal(seen, 'json');
  });
});
