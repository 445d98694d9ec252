/**
 * js-yaml 5 (the reference parser) and js-yaml 4 (the fast fallback), loaded on first use:
 * bpa's own reader (block-yaml.ts) reads the files of most sites alone, and loading the two
 * libraries cost every `bpa validate` and `bpa plan` about 20 ms of its start (docs/PERFORMANCE.md).
 * Loaded synchronously (their CommonJS builds), since parsing a file is synchronous.
 */
import { createRequire } from 'node:module';

type JsYaml5 = typeof import('js-yaml');
type JsYaml4 = typeof import('js-yaml-4');

let reference: JsYaml5 | undefined;
let fast: JsYaml4 | undefined;

/**
 * A require made at the first load, not when the module loads: the CLI's start-up snapshot
 * (scripts/bundle.mjs) is built in one place and may run from another.
 */
const load = (id: string): unknown => createRequire(import.meta.url)(id);

/** js-yaml 5: files the fast readers decline, error messages and positions (locate.ts). */
export function jsYaml5(): JsYaml5 {
  return (reference ??= load('js-yaml') as JsYaml5);
}

/** js-yaml 4: files bpa's reader declines, before js-yaml 5 is asked. */
export function jsYaml4(): JsYaml4 {
  return (fast ??= load('js-yaml-4') as JsYaml4);
}
