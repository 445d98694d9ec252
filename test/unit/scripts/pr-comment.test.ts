import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * scripts/pr-comment.sh against a stand-in for the GitHub CLI that answers `gh api` from a
 * JSON file of comments (its --jq filter run by the real jq) and records what was written.
 */
describe('the pull request comment: one comment, updated', function () {
  this.timeout(20_000);
  let tmp: string;
  before(async function () {
    const jq = await new Promise<boolean>((res) => execFile('jq', ['--version'], (e) => res(!e)));
    if (!jq) {
      console.log('    skipped: jq is not installed');
      this.skip();
    }
  });
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-pr-comment-'));
    await writeFile(
      join(tmp, 'gh'),
      `#!/usr/bin/env bash
# gh api [--paginate] [--method M] PATH [--jq F] [-F body=@FILE]
set -euo pipefail
[ "$1" = api ] || exit 3; shift
method=GET path= jq= body=
while [ $# -gt 0 ]; do
  case "$1" in
    --paginate) ;;
    --method) method=$2; shift ;;
    --jq) jq=$2; shift ;;
    -F) body=\${2#body=@}; shift ;;
    *) path=$1 ;;
  esac
  shift
done
echo "$method $path" >> "${tmp}/calls"
if [ "$method" = GET ]; then jq -r "$jq" "${tmp}/comments.json"; else cp "$body" "${tmp}/written"; echo '{}'; fi
`,
    );
    await chmod(join(tmp, 'gh'), 0o755);
    await writeFile(join(tmp, 'plan.md'), '<!-- bpa-plan -->\n### bpa plan: no changes\n');
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const run = (): Promise<string> =>
    new Promise((res, rej) =>
      execFile(
        join(ROOT, 'scripts', 'pr-comment.sh'),
        ['acme/site', '7', join(tmp, 'plan.md')],
        { env: { ...process.env, PATH: `${tmp}:${process.env['PATH'] ?? ''}` } },
        (err, stdout, stderr) => (err ? rej(new Error(stderr)) : res(stdout)),
      ),
    );

  it('posts a comment when the pull request has none from bpa', async () => {
    await writeFile(join(tmp, 'comments.json'), JSON.stringify([{ id: 1, body: 'LGTM' }]));
    assert.match(await run(), /posted a comment on #7/);
    assert.deepEqual((await readFile(join(tmp, 'calls'), 'utf8')).trim().split('\n'), [
      'GET repos/acme/site/issues/7/comments',
      'POST repos/acme/site/issues/7/comments',
    ]);
    assert.match(await readFile(join(tmp, 'written'), 'utf8'), /no changes/);
  });

  it("updates bpa's comment (found by its marker) instead of adding one", async () => {
    await writeFile(
      join(tmp, 'comments.json'),
      JSON.stringify([
        { id: 1, body: 'quoting <!-- bpa-plan --> here' },
        { id: 42, body: '<!-- bpa-plan -->\nold plan' },
      ]),
    );
    assert.match(await run(), /updated comment 42/);
    assert.deepEqual((await readFile(join(tmp, 'calls'), 'utf8')).trim().split('\n'), [
      'GET repos/acme/site/issues/7/comments',
      'PATCH repos/acme/site/issues/comments/42',
    ]);
  });

  it('action.yml: validate with annotations, plan as markdown, comment with this script; run blocks parse', async () => {
    const action = parse(await readFile(join(ROOT, 'action.yml'), 'utf8')) as {
      runs: { using: string; steps: Array<{ run?: string; name?: string }> };
    };
    assert.equal(action.runs.using, 'composite');
    const runs = action.runs.steps.map((s) => s.run ?? '').join('\n');
    assert.match(runs, /bin\/bpa" validate --format github "\$SITE"/);
    assert.match(runs, /bin\/bpa" plan "\$SITE" -o markdown/);
    assert.match(runs, /scripts\/pr-comment\.sh/);
    for (const step of action.runs.steps.filter((s) => s.run)) {
      const script = (step.run ?? '').replace(/\$\{\{[^}]*\}\}/g, 'x');
      await new Promise<void>((res, rej) =>
        execFile('bash', ['-n', '-c', script], (err, _o, stderr) =>
          err ? rej(new Error(`${step.name}: ${stderr}`)) : res(),
        ),
      );
    }
  });
});
