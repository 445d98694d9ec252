/** Whether `zone` is a time zone this runtime knows (the IANA database Node.js carries). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
