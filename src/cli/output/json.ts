/**
 * JSON output a piece at a time. `bpa plan -o json` of a 10,000-node site is 8 MB: written
 * as one text, it was held whole as a string and again as the bytes written, at the end of
 * the run when everything else is held too. Written here one list item at a time, each piece
 * is garbage before the next is made.
 */

/** Pieces are written once they reach this many characters: fewer writes, little held. */
const CHUNK = 1 << 16;

/**
 * Writes exactly `JSON.stringify({ ...head, [key]: items }, null, 2) + '\n'`, one item of the
 * list at a time. The list is the last member.
 */
export function writeJsonWithList(
  out: (text: string) => void,
  head: Record<string, unknown>,
  key: string,
  items: readonly unknown[],
): void {
  const empty = JSON.stringify({ ...head, [key]: [] }, null, 2);
  if (items.length === 0) {
    out(`${empty}\n`);
    return;
  }
  // `…"key": []\n}`: the list opens where its empty form stands.
  let pending = `${empty.slice(0, -'[]\n}'.length)}[`;
  // Each item as it stands in a list under `key`, indented as it is there.
  const open = `{\n  ${JSON.stringify(key)}: [\n`.length;
  const close = '\n  ]\n}'.length;
  items.forEach((item, i) => {
    const text = JSON.stringify({ [key]: [item] }, null, 2);
    pending += `${i ? ',' : ''}\n${text.slice(open, -close)}`;
    if (pending.length >= CHUNK) {
      out(pending);
      pending = '';
    }
  });
  out(`${pending}\n  ]\n}\n`);
}
