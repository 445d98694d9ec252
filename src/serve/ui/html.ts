/** HTML text: every value from a site, a report or a host is escaped here, nowhere else. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A tagged template whose `${}` values are escaped, except those already wrapped by html. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += piece(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function piece(v: unknown): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(piece).join('');
  if (v === undefined || v === null || v === false) return '';
  return esc(v);
}

/** A phase or state as a coloured badge (the colour comes from the class, never a style). */
export function badge(text: string | undefined): Html {
  const t = text ?? 'Unknown';
  return html`<span class="badge b-${t.toLowerCase().replace(/[^a-z]/g, '')}">${t}</span>`;
}

/**
 * A revision: its short form, the whole in the title; a commit links to its row in the
 * history (a directory's digest has none).
 */
export function rev(revision: string | undefined): Html {
  if (!revision) return html`<span class="muted">-</span>`;
  const short = revision.startsWith('sha256:') ? revision.slice(7, 19) : revision.slice(0, 7);
  const code = html`<code title="${revision}">${short}</code>`;
  return /^[0-9a-f]{40}$/.test(revision)
    ? html`<a href="/history#c-${revision}">${code}</a>`
    : code;
}

/** A time: relative in the text (as of `now`), exact in the title. */
export function when(isoTime: string | undefined, now: number): Html {
  if (!isoTime) return html`<span class="muted">-</span>`;
  const ms = now - Date.parse(isoTime);
  const s = Math.round(Math.abs(ms) / 1000);
  const amount =
    s < 60
      ? `${s}s`
      : s < 3600
        ? `${Math.round(s / 60)}m`
        : s < 86400
          ? `${Math.round(s / 3600)}h`
          : `${Math.round(s / 86400)}d`;
  return html`<time datetime="${isoTime}" title="${isoTime}"
    >${ms >= 0 ? `${amount} ago` : `in ${amount}`}</time
  >`;
}
