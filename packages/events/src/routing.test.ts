import { exampleContact } from './schemas/examples';
import { queueBindings, topicMatches } from './routing';
import { narrowRoutingKeys, routingKeyOf, SCORE_ONLY_CONTACT_UPDATE } from './schemas';

describe('topicMatches', () => {
  it('judges patterns as a topic exchange does: * one word, # zero or more', () => {
    expect(topicMatches('contact.updated', 'contact.updated')).toBe(true);
    expect(topicMatches('contact.updated', SCORE_ONLY_CONTACT_UPDATE)).toBe(false);
    expect(topicMatches('contact.*', 'contact.updated')).toBe(true);
    expect(topicMatches('contact.*', SCORE_ONLY_CONTACT_UPDATE)).toBe(false);
    expect(topicMatches('contact.#', SCORE_ONLY_CONTACT_UPDATE)).toBe(true);
    expect(topicMatches('contact.updated.#', 'contact.updated')).toBe(true);
    expect(topicMatches('#', SCORE_ONLY_CONTACT_UPDATE)).toBe(true);
    expect(topicMatches('*.updated.*', SCORE_ONLY_CONTACT_UPDATE)).toBe(true);
    expect(topicMatches('message.*', 'contact.updated')).toBe(false);
  });
});

describe('routingKeyOf', () => {
  const updated = (changes: string[]) => () => ({ contact: exampleContact, changes });

  it('a contact.updated that only moves leadScore goes under contact.updated.lead_score; any other under its type', () => {
    expect(narrowRoutingKeys()).toContainEqual({ type: 'contact.updated', key: SCORE_ONLY_CONTACT_UPDATE });
    expect(routingKeyOf('contact.updated', 1, updated(['leadScore']))).toBe(SCORE_ONLY_CONTACT_UPDATE);
    expect(routingKeyOf('contact.updated', 1, updated(['leadScore', 'status']))).toBe('contact.updated');
    expect(routingKeyOf('contact.updated', 1, updated(['status']))).toBe('contact.updated');
    expect(routingKeyOf('contact.updated', 1, updated([]))).toBe('contact.updated');
  });

  it('data it cannot judge keeps the type, and types without narrower keys never read their data', () => {
    expect(routingKeyOf('contact.updated', 1, () => ({ contact: exampleContact }))).toBe('contact.updated');
    expect(routingKeyOf('contact.updated', 1, () => JSON.parse('not json'))).toBe('contact.updated');
    const never = () => {
      throw new Error('read');
    };
    expect(routingKeyOf('contact.created', 1, never)).toBe('contact.created');
    expect(routingKeyOf('widget.created', 1, never)).toBe('widget.created');
  });
});

describe('queueBindings', () => {
  it('adds the narrower keys of the types a queue takes, unless its patterns already match them', () => {
    expect(queueBindings(['contact.created', 'contact.updated'])).toEqual(['contact.created', 'contact.updated', SCORE_ONLY_CONTACT_UPDATE]);
    expect(queueBindings(['contact.*'])).toEqual(['contact.*', SCORE_ONLY_CONTACT_UPDATE]);
    expect(queueBindings(['contact.#'])).toEqual(['contact.#']);
    expect(queueBindings(['message.received'])).toEqual(['message.received']);
  });

  it('leaves out an excluded key; excluding one the patterns match, or one nobody declares, throws', () => {
    expect(queueBindings(['contact.created', 'contact.updated'], [SCORE_ONLY_CONTACT_UPDATE])).toEqual(['contact.created', 'contact.updated']);
    expect(() => queueBindings(['contact.#'], [SCORE_ONLY_CONTACT_UPDATE])).toThrow('is matched by the binding "contact.#"');
    expect(() => queueBindings(['contact.updated'], ['contact.updated.name'])).toThrow('is not declared');
  });
});
