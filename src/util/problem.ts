/**
 * A problem found in the site: a validation error or warning, a load failure, a lease line
 * that could not be read. Positions are filled in as precisely as the stage that found the
 * problem can: `file` is relative to the site root; `line` and `column` are 1-based.
 */
/** A notice says what bpa skipped on purpose (a Secret beside the hosts); it never fails a run. */
export type Severity = 'error' | 'warning' | 'notice';

export interface Problem {
  /** Stable, documented code (docs/site-format.md), e.g. `DUPLICATE_MAC`. */
  code: string;
  severity: Severity;
  message: string;
  file?: string;
  line?: number;
  column?: number;
  /** JSON pointer of the offending value inside its document. */
  pointer?: string;
  /** Index of the document inside a multi-document file, 0-based. */
  doc?: number;
  /**
   * For a node that could not be placed by its placement terms: the hosts that came closest,
   * each requirement they fail with the value they have.
   */
  closest?: Array<{
    host: string;
    failures: Array<{ requirement: string; has: string; needs: string }>;
  }>;
  /**
   * In operator mode (the site read from the cluster), the object instead of a file:
   * `Provisioning/provisioning-east` (`namespace/Kind/name` when several namespaces are watched).
   */
  object?: string;
  /** With `object`: the field path, `spec.masters[0].master-1.mac-address`. */
  field?: string;
}

/**
 * Where a problem is, as every output names it: `file:line:column`, or in operator mode the
 * object and its field path; undefined when it has no place.
 */
export function problemPlace(p: Problem): string | undefined {
  if (p.object !== undefined) return p.field ? `${p.object} ${p.field}` : p.object;
  if (p.file === undefined) return undefined;
  return [p.file, p.line, p.column].filter((x) => x !== undefined).join(':');
}

export function error(code: string, message: string, where: Partial<Problem> = {}): Problem {
  return { code, severity: 'error', message, ...where };
}

export function warning(code: string, message: string, where: Partial<Problem> = {}): Problem {
  return { code, severity: 'warning', message, ...where };
}

export function notice(code: string, message: string, where: Partial<Problem> = {}): Problem {
  return { code, severity: 'notice', message, ...where };
}

export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/** Sorts problems by file, line, column, then code: the order a compiler prints them in. */
export function sortProblems(problems: Problem[]): Problem[] {
  return problems.sort(
    (a, b) =>
      (a.file ?? a.object ?? '').localeCompare(b.file ?? b.object ?? '') ||
      (a.field ?? '').localeCompare(b.field ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0) ||
      a.code.localeCompare(b.code) ||
      a.message.localeCompare(b.message),
  );
}

/** Builds a JSON pointer (RFC 6901) from path segments. */
export function pointer(...segments: Array<string | number>): string {
  let out = '';
  for (const segment of segments) {
    const s = String(segment);
    // Escaping only where needed: a plan builds a pointer for each of 10,000 nodes.
    out +=
      '/' + (s.includes('~') || s.includes('/') ? s.replace(/~/g, '~0').replace(/\//g, '~1') : s);
  }
  return out;
}

/** Splits a JSON pointer into its segments. */
export function parsePointer(ptr: string): string[] {
  if (ptr === '') return [];
  return ptr
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}
