// automation's contract rules: the gateway's schemas are built from these, and automation applies the same ones
// to a caller that does not come through the gateway. Rules that need automation's data or catalogue (template
// and user ids that must exist, trigger fields, a schedule in the future) stay in automation.
export * from './rules';
export * from './campaigns';
export * from './templates';
export * from './appointments';
export * from './email-channel';
