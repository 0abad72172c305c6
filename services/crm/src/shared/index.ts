/** Low-level helpers every crm module may use: request validation (400s naming the field). */
export * from './validation';
