/** 'sites/example/', './sites/example', 'sites//example' → 'sites/example'; '.', '' → ''. */
export function normalizeSitePath(sitePath: string): string {
  return sitePath
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}
