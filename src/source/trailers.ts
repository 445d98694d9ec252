// The trailers of a commit message, read as `git interpret-trailers --parse` reads them (git's
// trailer.c, with no trailer configuration and '#' as the comment character): a line that
// looks like a trailer anywhere else (the subject, a paragraph in the middle) is not one.

export interface Trailer {
  token: string;
  value: string;
}

/** Lines that make a block of mixed lines a trailer block (git's "git-generated" prefixes). */
const GIT_GENERATED = ['Signed-off-by: ', '(cherry picked from commit '];
const COMMENT = '#';
const CUT_LINE = `${COMMENT} ------------------------ >8 ------------------------`;

/**
 * The trailers of `message`, in order, continuation lines unfolded: those of its last
 * paragraph, when that paragraph is not the subject and is a trailer block (every line a
 * `Token: value` or a continuation, or at least a quarter of them with one Signed-off-by).
 * Anything from a `---` line on (a patch) and trailing comments are left out, as git does.
 */
export function parseTrailers(message: string): Trailer[] {
  const patchStart = findPatchStart(message);
  const end = patchStart - ignoredTail(message.slice(0, patchStart));
  const start = findTrailerStart(message.slice(0, end));
  const block = message.slice(start, end);
  const lines: string[] = [];
  let foldable = false;
  for (const line of splitKeepingNewlines(block)) {
    if (foldable && isSpace(line[0])) {
      lines[lines.length - 1] += line;
      continue;
    }
    lines.push(line);
    foldable = findSeparator(line) >= 1;
  }
  const out: Trailer[] = [];
  for (const line of lines) {
    if (line.startsWith(COMMENT)) continue;
    const at = findSeparator(line);
    if (at < 1) continue;
    out.push({
      token: trim(line.slice(0, at)),
      // Unfolded as git does: a newline and the blanks after it become one space.
      value: trim(trim(line.slice(at + 1)).replace(/\n[ \t\n\v\f\r]*/g, ' ')),
    });
  }
  return out;
}

/** The values of the trailers named `token` (case-insensitive, as git compares them). */
export function trailerValues(message: string, token: string): string[] {
  const want = token.toLowerCase();
  return parseTrailers(message)
    .filter((t) => t.token.toLowerCase() === want)
    .map((t) => t.value);
}

function isSpace(c: string | undefined): boolean {
  return c !== undefined && ' \t\n\v\f\r'.includes(c);
}

function trim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isSpace(s[a])) a++;
  while (b > a && isSpace(s[b - 1])) b--;
  return s.slice(a, b);
}

function splitKeepingNewlines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Where the line holding `pos` ends, its newline included. */
function nextLine(text: string, pos: number): number {
  const nl = text.indexOf('\n', pos);
  return nl === -1 ? text.length : nl + 1;
}

function isBlankLine(text: string, pos: number): boolean {
  let i = pos;
  while (i < text.length && text[i] !== '\n' && isSpace(text[i])) i++;
  return i >= text.length || text[i] === '\n';
}

/** git's find_patch_start: the first line `---` followed by whitespace. */
function findPatchStart(text: string): number {
  for (let s = 0; s < text.length; s = nextLine(text, s)) {
    if (text.startsWith('---', s) && isSpace(text[s + 3])) return s;
  }
  return text.length;
}

/** git's ignore_non_trailer: trailing comments, blank lines and an old "Conflicts:" block. */
function ignoredTail(text: string): number {
  let cutoff = text.length;
  if (text.startsWith(CUT_LINE)) cutoff = 0;
  else {
    const at = text.indexOf(`\n${CUT_LINE}`);
    if (at !== -1) cutoff = at + 1;
  }
  let boc = 0;
  let bol = 0;
  let inConflicts = false;
  while (bol < cutoff) {
    const nl = text.indexOf('\n', bol);
    const next = nl === -1 || nl >= cutoff ? cutoff : nl + 1;
    if (text[bol] === COMMENT || text[bol] === '\n') {
      if (!boc) boc = bol;
    } else if (text.startsWith('Conflicts:\n', bol)) {
      inConflicts = true;
      if (!boc) boc = bol;
    } else if (inConflicts && text[bol] === '\t') {
      // a path in the conflicts block
    } else if (boc) {
      boc = 0;
      inConflicts = false;
    }
    bol = next;
  }
  return boc ? text.length - boc : text.length - cutoff;
}

/** git's last_line: the start of the line before `len` (its own newline counts as its). */
function lastLine(text: string, len: number): number {
  if (len === 0) return -1;
  if (len === 1) return 0;
  for (let i = len - 2; i >= 0; i--) if (text[i] === '\n') return i + 1;
  return 0;
}

/** git's find_separator: `Token:` (letters, digits, `-`, then optional blanks), or -1. */
function findSeparator(line: string): number {
  let blank = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === ':') return i;
    if (!blank && /[A-Za-z0-9-]/.test(c)) continue;
    if (i !== 0 && (c === ' ' || c === '\t')) {
      blank = true;
      continue;
    }
    break;
  }
  return -1;
}

/** git's find_trailer_start: where the trailer block begins, or `text.length` for none. */
function findTrailerStart(text: string): number {
  const len = text.length;
  // The first paragraph is the subject and never holds trailers.
  let s = 0;
  for (; s < len; s = nextLine(text, s)) {
    if (text[s] === COMMENT) continue;
    if (isBlankLine(text, s)) break;
  }
  const endOfTitle = s;
  let onlySpaces = true;
  let recognized = false;
  let trailers = 0;
  let others = 0;
  let continuations = 0;
  for (let l = lastLine(text, len); l >= endOfTitle; l = lastLine(text, l)) {
    if (text[l] === COMMENT) {
      others += continuations;
      continuations = 0;
      continue;
    }
    if (isBlankLine(text, l)) {
      if (onlySpaces) continue;
      others += continuations;
      if (recognized && trailers * 3 >= others) return nextLine(text, l);
      if (trailers && !others) return nextLine(text, l);
      return len;
    }
    onlySpaces = false;
    if (GIT_GENERATED.some((p) => text.startsWith(p, l))) {
      trailers++;
      continuations = 0;
      recognized = true;
      continue;
    }
    if (findSeparator(text.slice(l, nextLine(text, l))) >= 1 && !isSpace(text[l])) {
      trailers++;
      continuations = 0;
    } else if (isSpace(text[l])) {
      continuations++;
    } else {
      others++;
      others += continuations;
      continuations = 0;
    }
  }
  return len;
}
