import { narrowRoutingKeys } from './schemas';

/** Whether a topic-exchange binding pattern matches a routing key (`*` one word, `#` zero or more), as RabbitMQ judges it. */
export function topicMatches(pattern: string, key: string): boolean {
  const match = (p: string[], k: string[]): boolean => {
    if (p.length === 0) return k.length === 0;
    if (p[0] === '#') return match(p.slice(1), k) || (k.length > 0 && match(p, k.slice(1)));
    return k.length > 0 && (p[0] === '*' || p[0] === k[0]) && match(p.slice(1), k.slice(1));
  };
  return match(pattern.split('.'), key.split('.'));
}

/**
 * What a queue is bound with: the consumer's patterns, plus every narrower routing key (schemas' `routingKeys`) of a
 * type those patterns take and they do not match themselves, so `contact.updated` still means every
 * contact.updated. `excluded` keys are left out; excluding one the patterns match anyway would be a no-op, so it
 * throws, as does excluding a key the catalogue does not declare.
 */
export function queueBindings(patterns: string[], excluded: string[] = []): string[] {
  const declared = narrowRoutingKeys();
  for (const key of excluded) {
    if (!declared.some((d) => d.key === key)) throw new Error(`excluded routing key "${key}" is not declared by any event type`);
    const catching = patterns.find((p) => topicMatches(p, key));
    if (catching) throw new Error(`excluded routing key "${key}" is matched by the binding "${catching}"`);
  }
  const taken = (key: string) => patterns.some((p) => topicMatches(p, key));
  const added = declared.filter((d) => taken(d.type) && !taken(d.key) && !excluded.includes(d.key)).map((d) => d.key);
  return [...patterns, ...new Set(added)];
}
