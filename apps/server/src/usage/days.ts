// UTC days, as usage counts them: the meter, the admin API's usage ranges and the keys command.

/** A day in milliseconds (a UTC day has no leap seconds in JavaScript's clock). */
export const dayMs = 86_400_000;
/** The UTC day of an instant, as `YYYY-MM-DD`. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
