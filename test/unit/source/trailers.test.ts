import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APPROVAL_TRAILER, approvedPlan } from '../../../src/source/input-commit.js';
import { parseTrailers } from '../../../src/source/trailers.js';

const H = 'a'.repeat(64);
const OLD = 'b'.repeat(64);
const LINE = `${APPROVAL_TRAILER}: ${H}`;

/** [name, message, the hash bpa takes as approved (undefined: none)] */
const MESSAGES: Array<[string, string, string | undefined]> = [
  ['the subject only', LINE, undefined],
  ['the subject only, with a newline', `${LINE}\n`, undefined],
  ['the subject, then a body', `${LINE}\n\nMerged by hand.\n`, undefined],
  ['a two-line first paragraph', `Merge\n${LINE}\n`, undefined],
  [
    'a paragraph in the middle',
    `Merge pull request #7\n\n${LINE}\n\nReviewed on the call.\n`,
    undefined,
  ],
  ['the last paragraph', `Merge pull request #7\n\nAdds worker-3.\n\n${LINE}\n`, H],
  ['the last paragraph, no final newline', `Merge\n\n${LINE}`, H],
  [
    'with other trailers',
    `Merge\n\nBody.\n\nReviewed-by: A Person <a@example.org>\n${LINE}\nCo-authored-by: B <b@example.org>\n`,
    H,
  ],
  [
    'with Signed-off-by and free text in the block (a quarter are trailers)',
    `Merge\n\nBody.\n\nSigned-off-by: A <a@example.org>\nsee the review\n${LINE}\nthanks\n`,
    H,
  ],
  ['free text in the block, no Signed-off-by', `Merge\n\n${LINE}\nsee the review\n`, undefined],
  ['trailing blank lines', `Merge\n\n${LINE}\n\n\n`, H],
  ['CRLF', `Merge\r\n\r\n${LINE}\r\n`, H],
  ['CRLF, trailing blank line', `Merge\r\n\r\nBody.\r\n\r\n${LINE}\r\n\r\n`, H],
  ['CRLF, in the middle', `Merge\r\n\r\n${LINE}\r\n\r\nBody.\r\n`, undefined],
  ['indented (a continuation, not a trailer)', `Merge\n\n  ${LINE}\n`, undefined],
  ['folded over two lines', `Merge\n\n${APPROVAL_TRAILER}:\n  ${H}\n`, H],
  ['blanks before the colon', `Merge\n\n${APPROVAL_TRAILER} : ${H}\n`, H],
  ['lower case', `Merge\n\n${APPROVAL_TRAILER.toLowerCase()}: ${H}\n`, H],
  ['two trailers: the last counts', `Merge\n\n${APPROVAL_TRAILER}: ${OLD}\n${LINE}\n`, H],
  [
    'a squash merge quoting an older approval in its body',
    `Squash (#12)\n\n* first\n\n${APPROVAL_TRAILER}: ${OLD}\n\n* second\n\n${LINE}\n`,
    H,
  ],
  [
    'a squash merge whose only approval is quoted in the body',
    `Squash (#12)\n\n* first\n\n${LINE}\n\n* second\n`,
    undefined,
  ],
  ['before a patch divider', `Merge\n\n${LINE}\n---\n site/x.yaml | 2 +-\n`, H],
  ['below a patch divider', `Merge\n\nBody.\n---\n\n${LINE}\n`, undefined],
  ['with a trailing comment', `Merge\n\n${LINE}\n# a comment\n`, H],
  [
    'a cherry-pick line',
    `Merge\n\nBody.\n\n${LINE}\n(cherry picked from commit ${'c'.repeat(40)})\n`,
    H,
  ],
  ['a trailing conflicts block', `Merge\n\n${LINE}\n\nConflicts:\n\tsite/x.yaml\n`, H],
  ['not a hash', `Merge\n\n${APPROVAL_TRAILER}: yes please\n`, undefined],
  ['empty', '', undefined],
];

describe('source: commit trailers as git reads them', () => {
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'bpa-trailers-'));
  });
  after(() => {
    rmSync(home, { recursive: true, force: true });
  });

  /** What `git interpret-trailers --parse` prints for `message`, with no configuration. */
  function gitParse(message: string): string {
    return execFileSync('git', ['interpret-trailers', '--parse'], {
      input: message,
      cwd: home,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CEILING_DIRECTORIES: home,
      },
    });
  }

  for (const [name, message] of MESSAGES) {
    it(`finds what git finds: ${name}`, () => {
      const ours = parseTrailers(message)
        .map((t) => `${t.token}: ${t.value}\n`)
        .join('');
      assert.equal(ours, gitParse(message));
    });
  }

  for (const [name, message, hash] of MESSAGES) {
    it(`${hash ? 'approves' : 'approves nothing'}: ${name}`, () => {
      assert.equal(approvedPlan(message).hash, hash);
      // And the hash bpa takes is one git lists as the trailer's last value.
      const fromGit = gitParse(message)
        .split('\n')
        .filter((l) => l.toLowerCase().startsWith(`${APPROVAL_TRAILER.toLowerCase()}: `))
        .map((l) => l.slice(APPROVAL_TRAILER.length + 2))
        .at(-1);
      assert.equal(
        hash,
        fromGit !== undefined && /^[0-9a-f]{64}$/.test(fromGit) ? fromGit : undefined,
      );
    });
  }
});
