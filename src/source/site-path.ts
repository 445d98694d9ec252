/** The directory under the site path where bpa writes its reports; never input. */
export const STATUS_DIR = 'status';

/** 'sites/example/', './sites/example', 'sites//example' → 'sites/example'; '.', '' → ''. */
export function normalizeSitePath(sitePath: string): string {
  return sitePath
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}
