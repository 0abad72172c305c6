/** Operation types the send governor budgets separately; `total` covers every send of an account. */
export const OPERATION_TYPES = ['total', 'ui', 'public_api', 'automation', 'campaign', 'auto', 'ai'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];
/**
 * Where a send comes from; each source is budgeted as its own operation type (and under `total`). `auto` is what the
 * inbox sends by itself (the auto-close message, the out-of-hours reply, the CSAT question, issue #29); `ai` the guarded
 * AI auto-reply's answers (issue #32).
 */
export type SendSource = Exclude<OperationType, 'total'>;
/** The sources a caller may name; `auto` only the inbox's own timers use. */
export const SEND_SOURCES: readonly SendSource[] = ['ui', 'public_api', 'automation', 'campaign'];

export interface Limit {
  /** Sends allowed in any rolling 24 hours. */
  daily: number;
  /** Sends allowed in any rolling `burstSeconds`. */
  burst: number;
  burstSeconds: number;
}
export type GovernorLimits = Record<OperationType, Limit>;

/**
 * Defaults per chat-network account. A personal chat account that sends in bulk gets flagged by the
 * network, so automated operations get far smaller budgets than an agent typing replies.
 */
export const DEFAULT_SEND_LIMITS =
  'total=1500/day,20/10s;ui=1000/day,15/10s;public_api=500/day,10/10s;automation=300/day,5/10s;campaign=200/day,3/10s;auto=300/day,5/10s;ai=300/day,5/10s';

const ENTRY = /^([a-z_]+)\s*=\s*(\d+)\s*\/\s*day\s*,\s*(\d+)\s*\/\s*(\d+)\s*s$/;

function parseEntries(spec: string): Partial<GovernorLimits> {
  const out: Partial<GovernorLimits> = {};
  for (const raw of spec.split(';')) {
    const entry = raw.trim();
    if (!entry) continue;
    const m = ENTRY.exec(entry);
    if (!m) throw new Error(`"${entry}" must look like ui=1000/day,15/10s`);
    const type = m[1] as OperationType;
    if (!OPERATION_TYPES.includes(type)) throw new Error(`unknown operation type "${m[1]}" (use ${OPERATION_TYPES.join(', ')})`);
    const [daily, burst, burstSeconds] = [Number(m[2]), Number(m[3]), Number(m[4])];
    if (daily < 1 || burst < 1 || burstSeconds < 1) throw new Error(`"${entry}": every number must be at least 1`);
    out[type] = { daily, burst, burstSeconds };
  }
  return out;
}

/** Parse `type=<daily>/day,<burst>/<seconds>s;...`; types not named keep their default. */
export function parseGovernorSpec(spec: string): GovernorLimits {
  return { ...(parseEntries(DEFAULT_SEND_LIMITS) as GovernorLimits), ...parseEntries(spec) };
}
