export function formatDate(d: Date, locale = "en-GB"): string {
  return d.toLocaleDateString(locale, { year: "numeric", month: "short", day: "numeric" });
}

export function formatRelative(d: Date, now = new Date()): string {
  const days = Math.round((now.getTime() - d.getTime()) / 86400000);
  return days === 0 ? "today" : `${days} days ago`;
}
