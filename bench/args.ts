/** Command-line options shared by the validate and plan benchmarks. */
import { SHAPES, isShape, type SiteShape } from './gen-site.js';

export interface BenchArgs {
  shapes: SiteShape[];
  runs: number;
  hosts: number[];
  /** The bpa executable to measure (--bpa): another build, to compare before and after. */
  bpa: string | undefined;
  flags: Set<string>;
}

export function benchArgs(argv: string[], defaults: { hosts: number[] }): BenchArgs {
  const out: BenchArgs = {
    shapes: Object.keys(SHAPES) as SiteShape[],
    runs: 5,
    hosts: defaults.hosts,
    bpa: undefined,
    flags: new Set(),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--shape' || a === '--shapes') {
      const shapes = value().split(',');
      for (const s of shapes)
        if (!isShape(s))
          throw new Error(`unknown shape ${s}: one of ${Object.keys(SHAPES).join(', ')}`);
      out.shapes = shapes as SiteShape[];
    } else if (a === '--runs') out.runs = Number(value());
    else if (a === '--hosts') out.hosts = value().split(',').map(Number);
    else if (a === '--bpa') out.bpa = value();
    else if (a.startsWith('--')) out.flags.add(a.slice(2));
    else throw new Error(`unexpected argument ${a}`);
  }
  return out;
}
